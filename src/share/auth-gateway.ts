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
    /**
     * A real request succeeded: the cookie changed, the real streams must be reopened with it; `renewAt`: when that
     * cookie is due for renewal (wall clock, ms), before the hub may end a stream opened on it; `added`: the channels it
     * grants that the cookie before did not, as far as the gateway knows (every one after a part's request, or none known).
     */
    granted(renewAt: number, added: readonly string[]): void;
    /** A split found `client`'s set failing while it did not ask: its connector must ask again, and hear why. */
    failed(client: string): void;
    /**
     * A request no client asked for (see {@link AuthGateway.record}) was granted: the real main stream is reopened with
     * the new cookie now, since no client's new virtual stream follows it.
     */
    reopen(): void;
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
    /** A probe of the client's batch isolation (see {@link AuthGateway.request}). */
    readonly probe: boolean;
    /** The client asks again for a set that holds a name a split suspended: asked for alone first (see {@link AuthGateway.#suspended}). */
    readonly retry?: boolean;
    /** The gateway's own request for a set the cookie does not cover (see {@link AuthGateway.record}): the client is not answered. */
    readonly silent?: boolean;
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
 * is in the last granted union and the cookie is fresh: the renewal the answer schedules (from the cookie's
 * remaining `expires_in`) comes at most 5 % of the grant's renewal delay after the grant's own renewal moment
 * (`cookie-refresh.ts`), before the hub may end the streams on that cookie (the first 37 s of a 300 s cookie). A leave therefore
 * costs no request, nor a public join soon after a grant; a guarded newcomer one; a renewal one. In
 * shared mode the gateway is the only authorizer of the browser for its hub, so the cookie holds its grants;
 * {@link AuthGateway.invalidate} (the hub refused a stream) sends the next request to the server.
 *
 * Issue 49: a client's batch isolation (issue 30: a channel whose auth fails alone, found by halving the batch, then
 * retried alone) asks with parts of its set. Such a probe is not the client's set: it is never recorded (the union keeps
 * the client's last set, so no other tab's request ever carries a channel that only a probe asked for), and it goes to
 * the server alone, as a connector alone would send it, so that what fails is the probe's own names. Its answer sets
 * the browser's cookie to the probe's grants: the next request asks the server for the union again, and the real
 * stream is not reopened on it. And a union of several clients' sets that fails with 5xx is split by client (see
 * `#split`): only the client whose own set fails gets the failure.
 */
export class AuthGateway {
    /** Every client's channel set, in first-seen order. */
    readonly #sets = new Map<string, readonly string[]>();

    /**
     * The names a split found failing, by the client whose set holds them (see {@link AuthGateway.#split}): the union
     * leaves them out until that client asks again (its own request goes to the server with them), so that the other
     * tabs' requests (renewals, joins, the reconnects of a hub that is down) do not fail and split again each time.
     */
    readonly #suspended = new Map<string, { readonly names: ReadonlySet<string>; readonly set: readonly string[] }>();

    /** Requests waiting for the next real request. */
    #waiting: Waiting[] = [];

    /** Whether a real request is in flight. */
    #inFlight = false;

    /** Whether a flush is queued for the end of this tick. */
    #queued = false;

    /**
     * Whether the browser's cookie holds a part of the union since the last union grant: a request for a part passed (a
     * probe, a split's set or channel asked for alone, a suspended set's retry). The next union grant reopens the real
     * stream on the union's cookie (make-before-break): a stream opened meanwhile (a narrowing reconcile, a native
     * reconnect) presented the part's cookie, without the other channels' grants, and would stay deaf for them until
     * its token's expiry (the simulation's seed 7282: a split's sets all passed alone, the last one's cookie stayed).
     */
    #partial = false;

    /** The last successful real request, or null (none yet, or invalidated). */
    #last: Grant | null = null;

    /**
     * What each client was last told: when its request arrived and the `expires_in` it got. Its renewal timer
     * fires at about `at + renewalDelay(expiresIn)`; a request from then on is its renewal and goes to the server.
     */
    readonly #told = new Map<string, { at: number; expiresIn: number | null }>();

    /**
     * The guarded channels a request of this engine granted, of those some client's set still holds (bounded by the
     * union): a channel not among them is what a union that now fails may fail for (see {@link AuthGateway.#split}).
     */
    #known = new Set<string>();

    /** Set by {@link AuthGateway.close}: nothing is answered any more. */
    #closed = false;

    /** Create the gateway; sends nothing until a client asks. */
    constructor(private readonly host: AuthGatewayHost) {}

    /**
     * Record `client`'s channel set without a request (its `hello`). `resync`: it re-registers with a new engine and sends
     * no request: it trusts the cookie to hold its grants, as the last engine's union did. But the cookie may be another
     * request's since: this engine's seed (its tab authorized its own channels alone meanwhile), or a request this engine
     * sent before the `hello` came, for a union without the set (the simulation's seed 2061: the new leading page's
     * first join). Then the union is authorized, without answering the client (from the grant when the request in
     * flight turns out to cover it), and the real stream reopens with the new cookie: on the old one, the hub would not
     * deliver the set's private updates.
     */
    record(client: string, names: readonly string[], resync = false): void {
        this.#record(client, names);
        if (!resync || this.#closed) return;
        const suspended = this.#suspended.get(client)?.names;
        const guarded = names.filter((name) => channelKind(name) !== "public" && suspended?.has(name) !== true);
        const last = this.#last;
        // No grant known and no request in flight: the cookie is the last engine's, whose union held the set.
        if (guarded.length === 0 || (last !== null ? guarded.every((name) => last.granted.has(name)) : !this.#inFlight)) return;
        this.#last = null;
        this.#enqueue({ client, at: Date.now(), names: [...names], answer: () => undefined, probe: false, silent: true });
    }

    /** Record `client`'s set (see {@link AuthGateway.record}). */
    #record(client: string, names: readonly string[]): void {
        // A set that narrows (the client's stream closed) keeps the suspension; one with another name ends it.
        const suspension = this.#suspended.get(client);
        if (suspension !== undefined && names.some((name) => !suspension.set.includes(name))) this.#suspended.delete(client);
        this.#sets.set(client, [...names]);
    }

    /**
     * Start from a grant the gateway did not request: client `client` authorized `grant.names` on its own, before the
     * engine existed (it led the tabs then: nothing else set the cookie since), or `grant.granted` (its own and another
     * tab's channels) where given.
     */
    seed(client: string, grant: { readonly names: readonly string[]; readonly granted?: readonly string[]; readonly response: AuthResponse; readonly sentAt: number }): void {
        this.#record(client, grant.names);
        const granted = grant.granted ?? grant.names;
        this.#last = { granted: new Set(granted), response: grant.response, sentAt: grant.sentAt };
        this.#learn(granted);
    }

    /**
     * Authorize `client`'s set `names`; `answer` gets its subset, from the last grant when it covers them. `probe`: a probe
     * of the client's batch isolation, which is not its set (see above).
     */
    request(client: string, names: readonly string[], answer: (result: AuthResult) => void, probe = false): void {
        // A request that holds a name a split suspended is asked for alone first (see #retry); one without ends the suspension.
        const suspension = this.#suspended.get(client);
        const retry = !probe && suspension !== undefined && names.some((name) => suspension.names.has(name));
        if (retry) {
            this.#sets.set(client, [...names]);
            this.#suspended.set(client, { names: suspension.names, set: [...names] });
        } else if (!probe) {
            this.#suspended.delete(client);
            this.#record(client, names);
        }
        const union = this.#union();
        const at = Date.now();
        const cached = retry ? null : this.#fromCache(client, names, union);
        if (cached !== null) return this.#tell(client, at, cached, answer, probe);
        this.#enqueue({ client, at, names: [...names], answer, probe, retry });
    }

    /** Wait for the next real request, flushed at the end of this tick. */
    #enqueue(entry: Waiting): void {
        this.#waiting.push(entry);
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
        this.#suspended.delete(client);
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

    /** Every client's set, less what is suspended of it (see {@link AuthGateway.#suspended}). */
    #held(): Array<[string, readonly string[]]> {
        return [...this.#sets].map(([client, names]) => {
            const suspended = this.#suspended.get(client)?.names;
            return [client, suspended === undefined ? names : names.filter((name) => !suspended.has(name))];
        });
    }

    /** The union of every client's set (less what is suspended), first-seen order, de-duplicated. */
    #union(): string[] {
        const union = new Set<string>();
        for (const [, names] of this.#held()) for (const name of names) union.add(name);
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
        // The client renews next at renewalDelay(left) from now: at most 5 % of the grant's renewal delay after the grant's
        // own renewal point, well within the 10 % head start a renewal takes on the hub's earliest close of the streams on
        // this cookie, so that a join or a renewal late in the grant's life, whose timer would run past that close, asks
        // the server (a 300 s cookie answers from its grant for its first 37 s).
        const { expiresIn } = last.response;
        const delay = renewalDelay(expiresIn, hub);
        const left = expiresIn === null ? null : expiresIn - (now - last.sentAt) / 1_000;
        if (now >= last.sentAt + delay || (left !== null && left <= 0) || now + renewalDelay(left, hub) > last.sentAt + 1.05 * delay) return null;
        if (told !== undefined && now >= told.at + renewalDelay(told.expiresIn, hub) - 1_000) return null;
        // Public channels never need a grant (laravel-mercure §2.3); a denied or new guarded name asks the server.
        if (names.some((name) => channelKind(name) !== "public" && !last.granted.has(name))) return null;
        const answer = this.#subset(names, last.response, last.sentAt, new Set(union.slice(MAX_CHANNELS)));
        // Marked, so that a stream the hub refuses after it re-authorizes at once (issue 13).
        return answer.kind === "ok" ? { ...answer, response: { ...answer.response, fromGrant: true } } : answer;
    }

    /**
     * Send one real request, answer its batch, then the trailing one: for the union when a client waits with its set,
     * else for the first waiting probe alone (see {@link AuthGateway}). A union that fails with 5xx is split by client
     * (see {@link AuthGateway.#split}).
     */
    async #flush(): Promise<void> {
        if (this.#inFlight || this.#closed || this.#waiting.length === 0) return;
        const retry = this.#waiting.find((entry) => entry.retry === true);
        if (retry !== undefined) return this.#retry(retry);
        const probe = this.#waiting.every((entry) => entry.probe) ? this.#waiting[0]! : null;
        const batch = probe === null ? this.#waiting.filter((entry) => !entry.probe) : [probe];
        this.#waiting = this.#waiting.filter((entry) => !batch.includes(entry));
        this.#inFlight = true;
        let union = probe?.names ?? this.#union();
        let sentAt = Date.now();
        const failure = await this.host.request(union.slice(0, MAX_CHANNELS));
        let result = failure;
        let failing: ReadonlySet<string> = new Set();
        const split = probe === null && serverFailed(failure) ? await this.#split(batch.map((entry) => entry.client)) : null;
        if (split !== null) ({ union, sentAt, result, failing } = split);
        this.#inFlight = false;
        if (this.#closed) return;
        const names = union.slice(0, MAX_CHANNELS);
        const over = new Set(union.slice(MAX_CHANNELS));
        let restored = false;
        if (result.kind === "ok" && probe !== null) this.#part(); // The cookie holds the probe's grants alone now.
        else if (result.kind === "ok") {
            const granted = names.filter((name) => result.response.channels.get(name)?.denied !== true);
            const before = this.#last?.granted;
            this.#last = { granted: new Set(granted), response: result.response, sentAt };
            this.#learn(granted);
            const added = before === undefined ? granted : granted.filter((name) => !before.has(name));
            this.host.granted(sentAt + renewalDelay(result.response.expiresIn, this.host.hubTimeouts()), added);
            restored = this.#partial;
            this.#partial = false;
        }
        for (const client of failing) if (!batch.some((entry) => entry.client === client && entry.silent !== true)) this.host.failed(client);
        for (const entry of batch) {
            const answer = failing.has(entry.client) ? failure : result.kind === "ok" ? this.#subset(entry.names, result.response, sentAt, over) : result;
            if (entry.silent !== true) this.#tell(entry.client, entry.at, answer, entry.answer, entry.probe);
            // The gateway's own request failed: the client, which asked nothing, is told as a split tells it (it asks again).
            else if (answer.kind !== "ok" && !failing.has(entry.client)) this.host.failed(entry.client);
        }
        if (result.kind === "ok" && (restored || batch.some((entry) => entry.silent === true && !batch.some((other) => other.client === entry.client && other.silent !== true)))) this.host.reopen();
        // The trailing batch: those the new grant covers are answered from it, the others in one more request.
        const trailing = this.#waiting;
        this.#waiting = [];
        const rest = this.#union();
        for (const entry of trailing) {
            // A request that came during a split which suspended part of it (it holds a channel that fails alone) is
            // asked for alone first, as if it came after (see #retry): the union leaves that channel out, and an answer
            // for it would read as granted (found by the simulation, seed 205).
            const suspension = this.#suspended.get(entry.client);
            if (!entry.probe && suspension !== undefined && entry.names.some((name) => suspension.names.has(name))) {
                this.#waiting.push({ ...entry, retry: true });
                continue;
            }
            const cached = this.#fromCache(entry.client, entry.names, rest);
            if (cached === null) this.#waiting.push(entry);
            else if (entry.silent !== true) this.#tell(entry.client, entry.at, cached, entry.answer, entry.probe);
        }
        await this.#flush();
    }

    /**
     * A client asks again for a set a split suspended part of: its set alone goes to the server first, so that each retry
     * of a tab whose channel still fails costs one request, not a failing union and a split. Still failing: it gets the
     * failure, and the suspension stays. Passing: the suspension ends, the cookie holds that set alone, and the client's
     * request waits for the union's.
     */
    async #retry(entry: Waiting): Promise<void> {
        this.#waiting = this.#waiting.filter((waiting) => waiting !== entry);
        this.#inFlight = true;
        const result = await this.host.request(entry.names.slice(0, MAX_CHANNELS));
        this.#inFlight = false;
        if (this.#closed) return;
        if (result.kind === "ok") {
            this.#part();
            this.#suspended.delete(entry.client);
            this.#record(entry.client, entry.names);
            this.#waiting.push({ ...entry, retry: false });
        } else this.#tell(entry.client, entry.at, result, entry.answer);
        await this.#flush();
    }

    /**
     * The union of several clients' sets failed with 5xx (issue 49): find the clients whose own set fails, and authorize
     * the others without them, so that a tab never fails for a channel it did not join (as without sharing, each tab's
     * requests holding its own channels only). The suspects are the clients whose set holds a guarded channel no request
     * of this engine granted yet (see {@link AuthGateway.#known}): each is asked for alone (one request each). When none
     * fails, or none stands out, a set granted before may have started failing (a channel whose authorization now
     * throws): the others are asked for alone, those whose request waits first, unless the first two fail (then it is the
     * server that fails, not a set). Each guarded channel of a failing set is then asked for alone: the final request is the union of the other
     * clients' sets and of the failing sets' channels that pass alone; the ones that fail are left out of it, no longer
     * known to pass (the next failing union suspects that client at once), and suspended (see
     * {@link AuthGateway.#suspended}). When every set passes alone (a 5xx of the moment), the final request is the whole
     * union again: the sets' own requests left the cookie with the last one's grants alone. Null (every client gets the
     * failure) when every set fails, or a request ends otherwise (a network error, a 4xx), or the final request fails
     * too.
     */
    async #split(asking: readonly string[]): Promise<{ union: string[]; sentAt: number; result: AuthResult; failing: ReadonlySet<string> } | null> {
        const sets = this.#held().filter(([, names]) => names.length > 0);
        const known = this.#known;
        const unknown = (names: readonly string[]) => names.some((name) => channelKind(name) !== "public" && !known.has(name));
        const suspects = sets.filter(([, names]) => unknown(names));
        if (sets.length < 2) return null;
        const failing = new Set<string>();
        // Each distinct set is asked for once (tabs that joined the same channels share its answer).
        const answers = new Map<string, boolean>();
        const others = sets.filter((set) => !suspects.includes(set));
        const order = [...suspects, ...others.filter(([client]) => asking.includes(client)), ...others.filter(([client]) => !asking.includes(client))];
        for (const [client, names] of order) {
            // The suspects first; the others (those that asked first) only when no suspect fails, unless the first two fail.
            const suspect = suspects.some(([id]) => id === client);
            if (!suspect && suspects.some(([id]) => failing.has(id))) break;
            const key = JSON.stringify(names.slice(0, MAX_CHANNELS));
            let passes = answers.get(key);
            if (passes === undefined) {
                const alone = await this.host.request(names.slice(0, MAX_CHANNELS));
                if (alone.kind === "ok") this.#part();
                if (this.#closed || (alone.kind !== "ok" && !serverFailed(alone))) return null;
                answers.set(key, (passes = alone.kind === "ok"));
            }
            if (!passes) failing.add(client);
            // Two sets fail and none passed: it is the server that fails, not a set.
            const told = [...answers.values()];
            if (!suspect && told.every((ok) => !ok) && told.length > 1) return null;
        }
        // Every set passes alone (a 5xx of the moment): the union is asked for again below, and restores the cookie.
        if (failing.size === sets.length) return null;
        // Each guarded channel of a failing set is asked for alone (once) unless a set that passed alone holds it: the ones
        // that fail are left out and no longer known to pass, the others stay in the union (their streams go on, their
        // tab's requests are answered for them). A set the loop above did not ask for may hold one that fails (seed 3176:
        // a channel two tabs joined): that set fails too, or the final union would fail with it, and every tab with it.
        const cleared = new Set<string>();
        for (const [, names] of sets) if (answers.get(JSON.stringify(names.slice(0, MAX_CHANNELS))) === true) for (const name of names) cleared.add(name);
        const passes = new Map<string, boolean>();
        for (const [client, names] of sets) {
            if (!failing.has(client)) continue;
            for (const name of names) {
                if (passes.has(name) || cleared.has(name) || channelKind(name) === "public") continue;
                const asked = answers.get(JSON.stringify([name]));
                const alone = asked !== undefined ? null : await this.host.request([name]);
                if (alone?.kind === "ok") this.#part();
                if (this.#closed || (alone !== null && alone.kind !== "ok" && !serverFailed(alone))) return null;
                passes.set(name, asked ?? alone?.kind === "ok");
            }
        }
        for (const [client, names] of sets) if (names.some((name) => passes.get(name) === false)) failing.add(client);
        if (failing.size === sets.length) return null;
        const union = new Set<string>();
        for (const [, names] of sets) for (const name of names) if (passes.get(name) !== false) union.add(name);
        for (const [name, ok] of passes) if (!ok) known.delete(name);
        const sentAt = Date.now();
        const result = await this.host.request([...union].slice(0, MAX_CHANNELS));
        if (result.kind !== "ok") return null;
        for (const [client, names] of sets) if (failing.has(client)) this.#suspended.set(client, { names: new Set(names.filter((name) => !union.has(name))), set: this.#sets.get(client) ?? names });
        return { union: [...union], sentAt, result, failing };
    }

    /** A request for a part of the union passed: the cookie holds its grants alone (see {@link AuthGateway.#partial}). */
    #part(): void {
        this.#last = null;
        this.#partial = true;
    }

    /** Remember `granted` as known to pass (see {@link AuthGateway.#known}), forgetting what no client's set holds any more. */
    #learn(granted: readonly string[]): void {
        const union = new Set(this.#union());
        this.#known = new Set([...this.#known, ...granted].filter((name) => union.has(name)));
    }

    /** Answer `client`'s request that arrived `at`, noting the `expires_in` it is told (not for a probe: its renewal is its set's). */
    #tell(client: string, at: number, result: AuthResult, answer: (result: AuthResult) => void, probe = false): void {
        if (result.kind === "ok" && !probe) this.#told.set(client, { at, expiresIn: result.response.expiresIn });
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

/** Whether `result` is the server failing (5xx) on what it was asked (a channel it cannot authorize: see `auth/isolation.ts`). */
function serverFailed(result: AuthResult): boolean {
    return result.kind === "error" && (result.status ?? 0) >= 500;
}
