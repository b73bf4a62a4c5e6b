import type { MercureError } from "../errors";
import { isRecord } from "../json";
import { cryptoError, hasWebCrypto } from "./crypto-error";
import type { DecryptedEnvelope } from "./jwe";
import { loadCrypto, type CryptoModule } from "./load";

/** The prefix of the channels whose broadcasts are encrypted (laravel-mercure §6). */
const ENCRYPTED_PREFIX = "private-encrypted-";

/** Why a channel without a key can neither decrypt nor seal (kept as a `cause`, never shown alone). */
const NO_KEY = "No JWK is known for this channel.";

/** Called with a decrypted broadcast, in order of arrival; never for the connection's own socket. */
export type DeliverDecrypted = (event: string, payload: unknown, socket: string | null) => void;

/** Called with a `decrypt_failed` or `crypto_unavailable` error instead of a delivery. */
export type DecryptFailure = (error: MercureError) => void;

/** Called with the channel and its error when a key cannot be used at all (`crypto_unavailable`). */
export type ChannelFailure = (channel: string, error: MercureError) => void;

/**
 * Options of {@link EncryptedChannels}; both default to the real thing.
 */
export interface EncryptedChannelsOptions {
    /** This connection's socket id: decrypted broadcasts whose inner `socket` equals it are dropped (`toOthers()`). */
    socketId?: () => string | null;
    /** Loads the JWE code (default: the memoised dynamic import `loadCrypto`). */
    load?: () => Promise<CryptoModule>;
}

/** One channel's key, as imported from the JWK of the latest auth response that listed the channel. */
interface ChannelKey {
    /** The JWK members the key was imported from (`kty`, `k`, `alg`): an unchanged JWK keeps the key. */
    readonly fingerprint: string;
    /** The JWK of the auth response, to import again after a failed import. */
    readonly jwk: unknown;
    /** The imported key; rejects (handled) for a missing or malformed JWK or without WebCrypto. */
    key: Promise<CryptoKey>;
    /** Stays the same across key rotations and is replaced by a leave: jobs queued before a leave deliver nothing. */
    readonly membership: object;
    /**
     * Set when the import failed although WebCrypto exists (say, the chunk did not download): the next event or auth
     * response imports it again.
     */
    failed: boolean;
    /** The imported key once `key` has resolved: later events decrypt without waiting on its promise. */
    ready: CryptoKey | undefined;
}

/** What decrypting one JWE came to, decided before its turn in the queue. */
type Outcome = { ok: true; envelope: DecryptedEnvelope } | { ok: false; error: MercureError };

/** One queued event: settled once its outcome is known and every job before it has settled. */
interface Job {
    /** Its channel (named when a callback throws). */
    readonly channel: string;
    /** What decrypting it came to; `undefined` while it decrypts. */
    outcome: Outcome | undefined;
    /** Deliver or fail it (or neither, when silenced since). */
    readonly settle: (outcome: Outcome) => void;
    /** The job queued after it. */
    next: Job | undefined;
}

/**
 * The encrypted channels of one connector: their keys and one decryption queue (laravel-mercure §6.4).
 *
 * - Keys: `setKeys()` after every auth response imports each `private-encrypted-*` channel's JWK once
 *   and keeps the key while the JWK is unchanged; a different JWK (rotation) replaces it; `drop()` on
 *   leave or eviction forgets it, and `clear()` on disconnect forgets everything.
 * - Queue: `enqueue()` starts decrypting at once but settles jobs strictly in order of arrival, so a
 *   slow decryption (or a key still importing) never lets a later event overtake an earlier one.
 * - Fail closed: every failure becomes one uniform `decrypt_failed` error (or `crypto_unavailable`),
 *   never a delivery; a failed job does not hold up the ones behind it.
 *
 * Nothing here loads the JWE chunk until a key is set or a JWE arrives, and never where WebCrypto is missing.
 */
export class EncryptedChannels {
    /** Channel name → its key; only channels listed by an auth response and not dropped since. */
    private readonly keys = new Map<string, ChannelKey>();

    /** The oldest job not yet settled (the queue's head), and the newest job (its tail). */
    private head: Job | undefined;
    private tail: Job | undefined;

    /** The JWE chunk once it has loaded: later events decrypt without waiting on its promise. */
    private module: CryptoModule | undefined;

    /** `settled()` calls waiting for the queue to empty. */
    private idle: Array<() => void> = [];

    /** Bumped by `clear()`: jobs queued before it deliver nothing. */
    private generation = 0;

    // `declare`d: the constructor assigns these two, so no field definitions are emitted.

    /** This connection's socket id, for `toOthers()`. */
    private declare readonly socketId: () => string | null;

    /** Loads `./jwe`. */
    private declare readonly load: () => Promise<CryptoModule>;

    /**
     * Create the (empty) encrypted-channel state of one connector; loads nothing.
     */
    constructor(options: EncryptedChannelsOptions = {}) {
        this.socketId = options.socketId ?? (() => null);
        this.load = options.load ?? loadCrypto;
    }

    /**
     * Take the JWKs of an auth response (channel → `jwk`, `null` when none); other channels are ignored.
     *
     * A channel whose JWK is unchanged keeps its key; a new or changed one (or one whose import failed) is
     * imported in the background (events that arrive meanwhile wait for it, in order); a failed import is also tried
     * again by the next event. Where WebCrypto is
     * missing, each newly keyed channel gets a `crypto_unavailable` error through `fail` once, and the JWE
     * chunk is not loaded.
     */
    setKeys(jwks: Iterable<readonly [channel: string, jwk: unknown]>, fail: ChannelFailure): void {
        for (const [channel, jwk] of jwks) {
            if (!channel.startsWith(ENCRYPTED_PREFIX)) continue;
            const fingerprint = fingerprintOf(jwk);
            const current = this.keys.get(channel);
            // [spec] laravel-mercure §6.4: keys are reused while the JWK is unchanged.
            if (current?.fingerprint === fingerprint && !current.failed) continue;
            const entry: ChannelKey = { fingerprint, jwk, key: this.importKey(channel, jwk, fail), membership: current?.membership ?? {}, failed: false, ready: undefined };
            this.watch(entry);
            this.keys.set(channel, entry);
        }
    }

    /** Note when `entry`'s import settles: the key, or a failure (reported per event, when one needs the key) to retry. */
    private watch(entry: ChannelKey): void {
        const key = entry.key;
        key.then(
            (ready) => entry.key === key && (entry.ready = ready),
            // Without WebCrypto there is nothing to retry.
            () => entry.key === key && (entry.failed = hasWebCrypto()),
        );
    }

    /** Import the JWK of `entry` again: its last import failed (see {@link ChannelKey.failed}). */
    private reimport(channel: string, entry: ChannelKey): void {
        entry.failed = false;
        entry.key = this.importKey(channel, entry.jwk, () => undefined);
        this.watch(entry);
    }

    /**
     * Forget a channel's key (the channel was left or evicted); its queued events deliver nothing.
     */
    drop(channel: string): void {
        this.keys.delete(channel);
    }

    /**
     * Forget every key and silence every queued event (the connector disconnected).
     */
    clear(): void {
        this.keys.clear();
        this.generation++;
    }

    /**
     * Decrypt one encrypted broadcast for `channel` and settle it in order of arrival.
     *
     * Exactly one of `deliver` (decrypted, and its inner `socket` is not ours) and `fail` is called, or
     * neither when the channel is dropped, the connector cleared, or the event is our own, before its turn.
     */
    enqueue(channel: string, jwe: string, deliver: DeliverDecrypted, fail: DecryptFailure): void {
        const generation = this.generation;
        const entry = this.keys.get(channel);
        const job: Job = {
            channel,
            outcome: undefined,
            settle: (result) => {
                // Checked at its turn: a leave or disconnect since it arrived silences the job.
                if (generation !== this.generation || this.keys.get(channel)?.membership !== entry?.membership) return;
                if (!result.ok) return fail(result.error);
                const { event, payload, socket } = result.envelope;
                // [spec] §6.4: toOthers() applies to the socket inside the plaintext.
                if (socket !== null && socket === this.socketId()) return;
                deliver(event, payload, socket);
            },
            next: undefined,
        };
        if (this.tail === undefined) this.head = job;
        else this.tail.next = job;
        this.tail = job;
        // Settled as soon as its outcome is known and every job before it has settled: no promise chained through each job.
        void this.open(channel, jwe, entry).then((outcome) => {
            job.outcome = outcome;
            this.flush();
        });
    }

    /**
     * Seal a plaintext for `channel` with its current key, as compact JWE with a fresh random IV (an
     * encrypted whisper, laravel-mercure §7.2).
     *
     * Rejects with `crypto_unavailable` where WebCrypto is missing (without loading the JWE chunk), and with a
     * plain `Error` (the reason) when the channel has no key or its key could not be imported.
     */
    async seal(channel: string, plaintext: object): Promise<string> {
        // [spec] browser-facts: no WebCrypto, no sealing, and no chunk download either.
        if (!hasWebCrypto()) throw cryptoError("crypto_unavailable", channel);
        const entry = this.keys.get(channel);
        if (entry === undefined) throw new Error(NO_KEY);
        if (entry.failed) this.reimport(channel, entry);
        const [key, module] = await Promise.all([entry.key, this.load()]);
        return module.sealEnvelope(plaintext, key);
    }

    /**
     * Resolve once every event queued so far has been settled, and those queued meanwhile (for tests and orderly shutdown).
     */
    settled(): Promise<void> {
        return this.tail === undefined ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
    }

    /** Settle every job at the head of the queue whose outcome is known, in order. */
    private flush(): void {
        for (let job = this.head; job?.outcome !== undefined; job = this.head) {
            this.head = job.next;
            // Cleared with the head, so that a callback that queues an event starts the queue afresh.
            if (this.head === undefined) this.tail = undefined;
            try {
                job.settle(job.outcome);
            } catch (error) {
                // A throwing callback must not stall the queue; the channel normally catches these itself.
                console.error(`laravel-echo-mercure: a callback for an encrypted event on channel "${job.channel}" threw.`, error);
            }
        }
        if (this.head === undefined) this.idle.splice(0).forEach((resolve) => resolve());
    }

    /** Import a JWK as the channel's key: checks WebCrypto first, so the JWE chunk is never loaded without it. */
    private async importKey(channel: string, jwk: unknown, fail: ChannelFailure): Promise<CryptoKey> {
        if (!hasWebCrypto()) {
            const error = cryptoError("crypto_unavailable", channel);
            if (jwk !== null && jwk !== undefined) fail(channel, error);
            throw error;
        }
        return (await this.load()).importChannelKey(jwk);
    }

    /** Decrypt a JWE with the channel's key as it stands now; never rejects. */
    private async open(channel: string, jwe: string, entry: ChannelKey | undefined): Promise<Outcome> {
        // [spec] browser-facts: say why (no secure context) before anything could throw a TypeError.
        if (!hasWebCrypto()) return { ok: false, error: cryptoError("crypto_unavailable", channel) };
        try {
            // [spec] §6.4: no JWK known for the channel fails like any other decryption failure.
            if (entry === undefined) throw new Error(NO_KEY);
            // An import that failed (the chunk did not download) is tried again now, not at the next auth response, which
            // may be minutes away (issue 49: every event until then failed).
            if (entry.failed) this.reimport(channel, entry);
            // Once the key and the chunk are there (every event but the first few), nothing is awaited before jose.
            const key = entry.ready ?? (await entry.key);
            const module = this.module ?? (this.module = await this.load());
            return { ok: true, envelope: await module.decryptEnvelope(jwe, key) };
        } catch (cause) {
            // [spec] §6.4: one uniform error whatever the reason; the reason stays in `cause`.
            return { ok: false, error: cryptoError("decrypt_failed", channel, cause) };
        }
    }
}

/** The JWK members a key is imported from and checked by (its use and operations too), as one comparable string ("" for no JWK object). */
function fingerprintOf(jwk: unknown): string {
    if (!isRecord(jwk)) return "";
    const { kty, k, alg, use, key_ops } = jwk;
    return JSON.stringify([kty, k, alg, use, key_ops]);
}
