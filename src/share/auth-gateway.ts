import type { AuthResult } from "../auth/auth-client";
import type { AuthResponse, ChannelGrant } from "../auth/auth-response";
import { renewalDelay, type HubTimeouts } from "../auth/cookie-refresh";
import { channelKind } from "../channel/channel-kind";
import { MAX_CHANNELS } from "../auth/limits";

/** What the gateway needs: the one real batch request (the leading tab's endpoint, headers and timeout) and the hub's timings. */
export interface AuthGatewayHost {
    /** POST `names` to the auth endpoint and classify the answer (`requestAuthorization`). */
    request(names: readonly string[]): Promise<AuthResult>;
    /** The leading connector's `hubTimeouts`, for the freshness of the cookie. */
    hubTimeouts(): HubTimeouts;
    /** A real request succeeded: the cookie changed, the real main stream must be reopened with it. */
    granted(): void;
}

/** The last successful real request: what it granted (the cookie holds it) and when it was sent. */
interface Grant {
    readonly granted: ReadonlySet<string>;
    readonly response: AuthResponse;
    readonly sentAt: number;
}

/** A client's request waiting for the real one. */
interface Waiting {
    readonly client: string;
    /** When the request reached the gateway (within a message's latency of the client's own request time). */
    readonly at: number;
    readonly names: readonly string[];
    readonly answer: (result: AuthResult) => void;
}

/**
 * The auth gateway of the engine (laravel-mercure §2 for every tab at once). Laravel's `mercure` driver
 * keeps one cookie per browser and every auth response replaces it with the grants of that request's
 * channels, so the gateway always authorizes the **union** of every client's channel set (first-seen order,
 * de-duplicated) in one real request, and answers each client for its own names only: its entries (`jwk`
 * of its encrypted channels, `denied` of its denied ones), `topic_prefix`, `client_events`, and
 * `expires_in` less the time since the real request was sent (so its renewal timer is never late).
 *
 * The union counts against the 100-channel limit: a name past it is answered `denied` with `limit: true`,
 * which the client's `BatchAuth.answer()` reports as `channel_limit` naming the channel.
 *
 * Requests arriving in the same tick, or while one is in flight, are coalesced (one in flight plus one
 * trailing). A failed request (4xx, 5xx, network) gives every client in its batch the same classified result.
 *
 * Issue 13: a client is answered from the last grant without a request when every guarded name it asks for
 * is in the last granted union and the cookie is fresh (before the renewal moment `cookie-refresh.ts`
 * computes). A leave therefore costs no request, nor a public join; a guarded newcomer one; a renewal one. In
 * shared mode the gateway is the only authorizer of the browser for its hub, so the cookie holds its grants;
 * {@link AuthGateway.invalidate} (the hub refused a stream) sends the next request to the server.
 */
export class AuthGateway {
    /** Every client's channel set, in first-seen order. */
    readonly #sets = new Map<string, readonly string[]>();

    /** Requests waiting for the next real request. */
    #waiting: Waiting[] = [];

    /** Whether a real request is in flight. */
    #inFlight = false;

    /** Whether a flush is queued for the end of this tick. */
    #queued = false;

    /** The last successful real request, or null (none yet, or invalidated). */
    #last: Grant | null = null;

    /**
     * What each client was last told: when its request arrived and the `expires_in` it got. Its renewal timer
     * fires at about `at + renewalDelay(expiresIn)`; a request from then on is its renewal and goes to the server.
     */
    readonly #told = new Map<string, { at: number; expiresIn: number | null }>();

    /** Set by {@link AuthGateway.close}: nothing is answered any more. */
    #closed = false;

    /** Create the gateway; sends nothing until a client asks. */
    constructor(private readonly host: AuthGatewayHost) {}

    /** Record `client`'s channel set without a request (it re-registers with a new engine). */
    record(client: string, names: readonly string[]): void {
        this.#sets.set(client, [...names]);
    }

    /**
     * Start from a grant the gateway did not request: client `client` authorized `grant.names` on its own, before the
     * engine existed (it led the tabs then: nothing else set the cookie since).
     */
    seed(client: string, grant: { readonly names: readonly string[]; readonly response: AuthResponse; readonly sentAt: number }): void {
        this.record(client, grant.names);
        this.#last = { granted: new Set(grant.names), response: grant.response, sentAt: grant.sentAt };
    }

    /** Authorize `client`'s set `names`; `answer` gets its subset, from the last grant when it covers them. */
    request(client: string, names: readonly string[], answer: (result: AuthResult) => void): void {
        this.record(client, names);
        const union = this.#union();
        const at = Date.now();
        const cached = this.#fromCache(client, names, union);
        if (cached !== null) return this.#tell(client, at, cached, answer);
        this.#waiting.push({ client, at, names: [...names], answer });
        if (this.#queued) return;
        this.#queued = true;
        queueMicrotask(() => {
            this.#queued = false;
            void this.#flush();
        });
    }

    /** A client left: its names leave the union of the next request (the cookie may still grant them). */
    forget(client: string): void {
        this.#sets.delete(client);
        this.#told.delete(client);
        this.#waiting = this.#waiting.filter((entry) => entry.client !== client);
    }

    /** The hub refused a stream: the cookie is not what the last grant says; the next request goes to the server. */
    invalidate(): void {
        this.#last = null;
    }

    /** The engine stops: answer nothing more (clients re-send to the next engine). */
    close(): void {
        this.#closed = true;
        this.#waiting = [];
    }

    /** The union of every client's set, first-seen order, de-duplicated. */
    #union(): string[] {
        const union = new Set<string>();
        for (const names of this.#sets.values()) for (const name of names) union.add(name);
        return [...union];
    }

    /** The answer from the last grant when it covers every guarded name of `names` and the cookie is fresh, else null. */
    #fromCache(client: string, names: readonly string[], union: readonly string[]): AuthResult | null {
        const last = this.#last;
        if (last === null) return null;
        // [spec] laravel-mercure §10: not within the renewal margin of expires_in (the moment cookie-refresh.ts renews),
        // neither the cookie's nor the one this client was told (its renewal timer's; 1 s for the message's way).
        const hub = this.host.hubTimeouts();
        const told = this.#told.get(client);
        const now = Date.now();
        if (now >= last.sentAt + renewalDelay(last.response.expiresIn, hub)) return null;
        if (told !== undefined && now >= told.at + renewalDelay(told.expiresIn, hub) - 1_000) return null;
        // Public channels never need a grant (laravel-mercure §2.3); a denied or new guarded name asks the server.
        if (names.some((name) => channelKind(name) !== "public" && !last.granted.has(name))) return null;
        const answer = this.#subset(names, last.response, last.sentAt, new Set(union.slice(MAX_CHANNELS)));
        // Marked, so that a stream the hub refuses after it re-authorizes at once (issue 13).
        return answer.kind === "ok" ? { ...answer, response: { ...answer.response, fromGrant: true } } : answer;
    }

    /** Send one real request for the union, answer its batch, then the trailing one. */
    async #flush(): Promise<void> {
        if (this.#inFlight || this.#closed || this.#waiting.length === 0) return;
        const batch = this.#waiting;
        this.#waiting = [];
        const union = this.#union();
        const names = union.slice(0, MAX_CHANNELS);
        const over = new Set(union.slice(MAX_CHANNELS));
        this.#inFlight = true;
        const sentAt = Date.now();
        const result = await this.host.request(names);
        this.#inFlight = false;
        if (this.#closed) return;
        if (result.kind === "ok") {
            const granted = names.filter((name) => result.response.channels.get(name)?.denied !== true);
            this.#last = { granted: new Set(granted), response: result.response, sentAt };
            this.host.granted();
        }
        for (const entry of batch) this.#tell(entry.client, entry.at, result.kind === "ok" ? this.#subset(entry.names, result.response, sentAt, over) : result, entry.answer);
        // The trailing batch: those the new grant covers are answered from it, the others in one more request.
        const trailing = this.#waiting;
        this.#waiting = [];
        const rest = this.#union();
        for (const entry of trailing) {
            const cached = this.#fromCache(entry.client, entry.names, rest);
            if (cached !== null) this.#tell(entry.client, entry.at, cached, entry.answer);
            else this.#waiting.push(entry);
        }
        await this.#flush();
    }

    /** Answer `client`'s request that arrived `at`, noting the `expires_in` it is told. */
    #tell(client: string, at: number, result: AuthResult, answer: (result: AuthResult) => void): void {
        if (result.kind === "ok") this.#told.set(client, { at, expiresIn: result.response.expiresIn });
        answer(result);
    }

    /** `response` for the client's `names` only; names in `over` are past the union's 100-channel limit. */
    #subset(names: readonly string[], response: AuthResponse, sentAt: number, over: ReadonlySet<string>): AuthResult {
        const channels = new Map<string, ChannelGrant>();
        for (const name of names) {
            // A public name the last request did not carry (answered from the grant) gets the entry the server gives it.
            const entry = over.has(name)
                ? ({ name, denied: true, jwk: null, limit: true } as const)
                : (response.channels.get(name) ?? (channelKind(name) === "public" ? { name, denied: false, jwk: null } : undefined));
            if (entry !== undefined) channels.set(name, entry);
        }
        const { expiresIn } = response;
        // Never 0 or less (that reads as "unknown"): a nearly expired cookie renews at once anyway.
        const left = expiresIn === null ? null : Math.max(expiresIn - (Date.now() - sentAt) / 1_000, 0.001);
        return { kind: "ok", response: { ...response, channels, expiresIn: left } };
    }
}
