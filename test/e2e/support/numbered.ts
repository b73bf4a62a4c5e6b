import { expect } from "vitest";
import type { DevServer } from "../../../src/dev/server";
import type { NodeClient } from "./stack";
import { sleep } from "./wait";

// Numbered broadcasts and the checks on what a client received of them: the continuity suites count what was
// lost, duplicated or reordered with these.

/** A running producer of numbered broadcasts; `done` settles when the last one was published or it was stopped. */
export interface NumberedStream {
    /** Settles after the last publication. */
    readonly done: Promise<void>;
    /** How many were published so far. */
    published(): number;
    /** Stop after the publication in flight. */
    stop(): Promise<void>;
}

/**
 * Publish `{ n }` for n = 1..count to `channel` as `App\Events\Numbered`, `interval` ms apart, retrying a publication
 * until the hub takes it (as a queue worker would).
 */
export function numberedStream(server: DevServer, channel: string, count: number, interval: number): NumberedStream {
    let stopped = false;
    let published = 0;
    const done = (async () => {
        for (let n = 1; n <= count && !stopped; n++) {
            for (;;) {
                try {
                    await server.broadcast({ channels: [channel], event: "App\\Events\\Numbered", payload: { n } });
                    break;
                } catch {
                    await sleep(50); // the hub is down: the job is retried
                }
            }
            published = n;
            if (interval > 0) await sleep(interval);
        }
    })();
    return {
        done,
        published: () => published,
        stop: () => {
            stopped = true;
            return done;
        },
    };
}

/** Record the numbers a channel (joined now) receives, in arrival order. */
export function recordNumbers(client: NodeClient, kind: "private" | "public", name: string): number[] {
    const received: number[] = [];
    const joined = kind === "private" ? client.echo.private(name) : client.echo.channel(name);
    joined.listen("Numbered", (payload: { n: number }) => received.push(payload.n));
    return received;
}

/** Expect 1..count received exactly once each, in order. */
export function expectExactly(received: readonly number[], count: number): void {
    const seen = new Set(received);
    const missing: number[] = [];
    for (let n = 1; n <= count; n++) if (!seen.has(n)) missing.push(n);
    expect({ missing: missing.length > 20 ? `${missing.length} numbers, from ${missing[0]}` : missing, duplicates: received.length - seen.size }).toEqual({ missing: [], duplicates: 0 });
    expect(received).toEqual(Array.from({ length: count }, (_, i) => i + 1));
}
