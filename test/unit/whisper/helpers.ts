import { vi } from "vitest";
import type { MercureError } from "../../../src/errors";
import type { FetchLike, FetchResponseLike } from "../../../src/transport/platform";

/** The topic prefix of laravel-mercure §2.5 (the server default). */
export const PREFIX = "https://laravel.alt/echo/";

/** This connection's socket id in every test. */
export const OWN = "own.socket";

/** A peer's socket id. */
export const PEER = "peer.socket";

/** Let every pending microtask and already-due macrotask run (ordering, not timing: no duration involved). */
export const drain = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** A promise with its resolve function, to hold a step until the test lets it go. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
    let resolve!: (value: T) => void;
    const promise = new Promise<T>((r) => (resolve = r));
    return { promise, resolve };
}

/** One scripted answer of the fake fetch: a status, a rejection, or a promise the test settles. */
export type Reply = number | Error | Promise<number>;

/** A recorded fetch call. */
export interface FetchCall {
    url: string;
    init: RequestInit;
}

/**
 * A fetch that records every call and answers from a script (200 when the script is empty); its
 * responses count how often their body was read.
 */
export function scriptedFetch(...script: Reply[]) {
    const calls: FetchCall[] = [];
    let bodyReads = 0;
    const fetch: FetchLike = async (url, init) => {
        calls.push({ url, init });
        const next = script.shift() ?? 200;
        if (next instanceof Error) throw next;
        const status = await next;
        const response: FetchResponseLike = {
            status,
            text: async () => {
                bodyReads++;
                return "urn:uuid:0";
            },
        };
        return response;
    };
    return { fetch, calls, script, bodyReads: () => bodyReads };
}

/** Collects what a host is told to report, in order. */
export function reports() {
    const list: Array<{ channel: string; error: MercureError }> = [];
    const report = vi.fn((channel: string, error: MercureError) => void list.push({ channel, error }));
    return { list, report, codes: () => list.map(({ channel, error }) => `${channel}:${error.code}`) };
}
