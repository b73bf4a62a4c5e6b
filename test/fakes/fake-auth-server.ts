import type { FetchLike, FetchResponseLike } from "../../src/transport/platform";

/** One auth request as the fake server saw it. */
export interface RecordedAuthRequest {
    url: string;
    init: RequestInit;
    headers: Record<string, string>;
    channelNames: string[];
}

/** What a handler answers. */
export interface FakeAuthAnswer {
    status: number;
    body?: unknown;
    /** Response headers (none by default). */
    headers?: Record<string, string>;
    /** The URL fetch ended at after following a redirect (`redirected` is then true). */
    redirectedTo?: string;
}

/** The default prefix the real server uses. */
export const PREFIX = "https://laravel.alt/echo/";

/** A fake `fetch` for the batch auth endpoint, with a scriptable handler and deferrable answers. */
export class FakeAuthServer {
    readonly requests: RecordedAuthRequest[] = [];

    /** Answers each request; default: grant everything with expires_in 300. */
    handler: (names: string[], request: RecordedAuthRequest) => FakeAuthAnswer | Promise<FakeAuthAnswer> = (names) => grant(names);

    /** Requests waiting for {@link FakeAuthServer.release}, when {@link FakeAuthServer.hold} is on. */
    private readonly held: Array<() => void> = [];
    private holding = false;

    /** The hub probes (GET requests) the connector's diagnostics made, by URL. */
    readonly probes: string[] = [];

    /**
     * Answers each GET (a diagnostics probe of the hub); default: the hub accepts it now (200, an event
     * stream), so a diagnosis names nothing and the usual `stream_error` stands alone.
     */
    probeHandler: (url: string, init: RequestInit) => FetchResponseLike | Promise<FetchResponseLike> = () => acceptedStream();

    /** The fetch to give the connector. */
    readonly fetch: FetchLike = async (url, init) => {
        if ((init.method ?? "GET") === "GET") {
            this.probes.push(url);
            return this.probeHandler(url, init);
        }
        const headers = Object.fromEntries(Object.entries((init.headers ?? {}) as Record<string, string>));
        const body = JSON.parse(String(init.body)) as { channel_names: string[] };
        const request: RecordedAuthRequest = { url, init, headers, channelNames: body.channel_names };
        this.requests.push(request);
        if (this.holding) {
            await new Promise<void>((resolve, reject) => {
                this.held.push(resolve);
                init.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")));
            });
        }
        if (init.signal?.aborted) throw new DOMException("aborted", "AbortError");
        const answer = await this.handler(body.channel_names, request);
        return response(answer);
    };

    /** Hold every request until released. */
    hold(): void {
        this.holding = true;
    }

    /** Release held requests (and stop holding). */
    release(): void {
        this.holding = false;
        for (const resolve of this.held.splice(0)) resolve();
    }

    /** The channel names of the last request. */
    lastNames(): string[] {
        const last = this.requests[this.requests.length - 1];
        if (last === undefined) throw new Error("no auth request was made");
        return last.channelNames;
    }
}

/** A 200 that grants every name. */
export function grant(names: string[], extra: Record<string, unknown> = {}, denied: string[] = []): FakeAuthAnswer {
    return {
        status: 200,
        body: {
            channel_names: names.map((name) => (denied.includes(name) ? { name, denied: true } : { name })),
            expires_in: 300,
            topic_prefix: PREFIX,
            client_events: true,
            ...extra,
        },
    };
}

function response(answer: FakeAuthAnswer): FetchResponseLike {
    const text = answer.body === undefined ? "" : typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body);
    return {
        status: answer.status,
        ...(answer.headers === undefined ? {} : { headers: new Headers(answer.headers) }),
        ...(answer.redirectedTo === undefined ? {} : { redirected: true, url: answer.redirectedTo }),
        text: async () => text,
    };
}

/** A hub's answer accepting a subscription: 200 with an event-stream body that is never read. */
export function acceptedStream(): FetchResponseLike {
    return { status: 200, headers: new Headers({ "content-type": "text/event-stream" }), text: async () => "" } as FetchResponseLike;
}
