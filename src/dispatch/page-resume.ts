/*
 * Resume across the pages of one tab (issue 52 part 2, the `resumeAcrossPages` option): the page a tab leaves keeps the
 * id of the last event it delivered in `sessionStorage`, and the tab's next page subscribes from it, so that what the
 * server broadcast while the browser moved from one page to the next arrives on the next page, and nothing twice.
 *
 * One record per hub (its key names the hub URL), holding the cursor, when it was written and a fingerprint of the
 * page's session CSRF token: Laravel regenerates that token at every login and logout, so another user's page, or
 * the same user's after a logout, finds a fingerprint that does not match and resumes nothing. The token is 40 random
 * characters (`Str::random(40)`, about 238 bits); 53 bits of a hash of it cannot give it back. A token shorter than
 * {@link MIN_TOKEN_LENGTH} (not Laravel's) is never fingerprinted: its page neither writes nor resumes. No other
 * header or credential is stored in any form (SECURITY.md).
 *
 * A record is taken once (removed as it is read, used or not), only by a page of the same tab (a tab's first page, a
 * new tab into which the browser copied the opener's `sessionStorage`, resumes nothing), only by the page that
 * follows the one that wrote it (written after this page's navigation started: a page in between that did not take it,
 * without the option or whose resume code did not download, may have received what follows its cursor), and only
 * within {@link RESUME_MAX_AGE_MS} of the moment the previous page left.
 *
 * Issue 53's navigation: the record may also hold what the hub cookie held when the page left ({@link CookieGrant}),
 * by which the next page opens its stream beside its auth request (see `ResumeCapability.early`); a record holds a
 * cursor, a grant, or both.
 */

import type { DeliveryLedger } from "./delivery-ledger";

/** How long after the previous page left the next one may resume from its cursor: 2 minutes. */
export const RESUME_MAX_AGE_MS = 120_000;

/** The shortest CSRF token fingerprinted: shorter ones are not Laravel's random session tokens. */
export const MIN_TOKEN_LENGTH = 20;

/**
 * How many of the events it received last a page leaves to the next (see {@link ResumeRecord.delivered}): more than a
 * navigation's worth (the events between the engine's cursor and the page's, when tabs share).
 */
export const DELIVERED_LIMIT = 64;

/** The `sessionStorage` key prefix of the records; the hub URL follows. */
export const RESUME_KEY = "laravel-echo-mercure:resume:";

/** The page APIs the records need, injected for tests. */
export interface ResumePage {
    /** The tab's `sessionStorage`, or undefined where there is none (Node.js, storage blocked). */
    readonly storage: Pick<Storage, "getItem" | "setItem" | "removeItem"> | undefined;
    /** `history.length`: 1 on a tab's first page (a new tab, or one opened by `window.open`). */
    readonly historyLength: number;
    /** How this document was loaded (`performance.getEntriesByType("navigation")[0].type`): "navigate", "reload", "back_forward". */
    readonly navigation: string | undefined;
    /** The wall clock, in milliseconds. */
    readonly now: () => number;
    /** When this document's navigation started, on that clock (the previous page leaves after it). */
    readonly startedAt: number;
}

/**
 * What the hub cookie held when the page left (issue 53's navigation): the last grant of a page whose streams were its
 * own, read by the next page to open its stream beside its auth request (see `early` in resume-capability.ts).
 */
export interface CookieGrant {
    /** The channels it granted, by full name. */
    readonly names: readonly string[];
    /** The answer's topic prefix (null: a legacy server's bare names). */
    readonly prefix: string | null;
    /** When its request was sent (wall clock, ms). */
    readonly sentAt: number;
    /** The cookie's lifetime in seconds. */
    readonly expiresIn: number;
    /** The stamp its request wrote (see `auth-stamp.ts`): still the origin's last one while no auth request was sent since. */
    readonly stamp: string;
}

/** What the page that left wrote: the cursor, the cookie's grant, when, and whose session it was. */
export interface ResumeRecord {
    /** The id of the last event the page delivered, or null (it received none). */
    readonly cursor: string | null;
    /** What the hub cookie held, or absent (the page's streams were not its own, or it had no grant). */
    readonly grant?: CookieGrant;
    /**
     * The last events the page received (at most {@link DELIVERED_LIMIT}), oldest first: each id with the channel or
     * channels it reached. The next page drops them should its stream replay them: with tab sharing, the tabs' stream
     * may resume from an older cursor than the page's (another tab's), and replay what this page had.
     */
    readonly delivered?: ReadonlyArray<readonly [string, readonly string[]]>;
    /** When the page left (wall clock, ms). */
    readonly at: number;
    /** The fingerprint of its session CSRF token (see {@link sessionFingerprint}). */
    readonly session: string;
}

/** Why a page resumes nothing (the `debug` log's `reason`), or "resumed". */
export type ResumeOutcome = "resumed" | "none" | "first page" | "other session" | "earlier page" | "too old" | "no session";

/** The page's own APIs, read now; undefined pieces where the platform has none. */
export function browserPage(): ResumePage {
    const scope = globalThis as { sessionStorage?: Storage; history?: History; performance?: Performance };
    let storage: Storage | undefined;
    try {
        storage = scope.sessionStorage; // Throws where storage is blocked (sandboxed frames, some privacy settings).
    } catch {
        storage = undefined;
    }
    const entry = scope.performance?.getEntriesByType?.("navigation")[0] as { type?: string } | undefined;
    // performance.now() counts from the navigation's start; read beside Date.now(), not from timeOrigin, which drifts from it.
    const startedAt = Date.now() - (scope.performance?.now() ?? 0);
    return { storage, historyLength: scope.history?.length ?? 0, navigation: entry?.type, now: Date.now, startedAt };
}

/**
 * A fingerprint of the page's session CSRF token, or null for none or one shorter than {@link MIN_TOKEN_LENGTH}: two
 * seeded 32-bit multiplicative hashes mixed into 53 bits, in base 36. Enough to tell two sessions apart; too little to
 * give a 238-bit token back.
 */
export function sessionFingerprint(token: unknown): string | null {
    if (typeof token !== "string" || token.length < MIN_TOKEN_LENGTH) return null;
    let a = 0x9e3779b9;
    let b = 0x85ebca6b;
    for (let i = 0; i < token.length; i++) {
        const code = token.charCodeAt(i);
        a = Math.imul(a ^ code, 0x01000193);
        b = Math.imul(b ^ code, 0x5bd1e995);
    }
    a = Math.imul(a ^ (a >>> 15), 0x2c1b3c6d) ^ Math.imul(b ^ (b >>> 13), 0x297a2d39);
    b = Math.imul(b ^ (b >>> 16), 0xcc9e2d51) ^ Math.imul(a ^ (a >>> 13), 0x1b873593);
    return ((b >>> 0) % 0x200000 * 0x100000000 + (a >>> 0)).toString(36);
}

/**
 * Take the record of `hub` from the tab's storage: removed whatever follows; its cursor when it belongs to
 * `session` (see {@link sessionFingerprint}), was written less than {@link RESUME_MAX_AGE_MS} ago, and this is not
 * the tab's first page.
 */
export function takeResume(page: ResumePage, hub: string, session: string | null): TakenResume {
    const record = readRecord(page, hub);
    if (record === null) return { cursor: null, grant: null, delivered: [], outcome: "none" };
    // A tab's first page has no previous page: a record there was copied from the opener's storage (window.open, a
    // link with target=_blank where the browser still copies it). A reload of it keeps its history length of 1.
    const outcome: ResumeOutcome =
        page.historyLength <= 1 && page.navigation !== "reload" ? "first page"
        : session === null ? "no session"
        : record.session !== session ? "other session"
        : record.at < page.startedAt ? "earlier page"
        : !(page.now() - record.at < RESUME_MAX_AGE_MS && page.now() >= record.at) ? "too old"
        : "resumed";
    const resumed = outcome === "resumed";
    return { cursor: resumed ? record.cursor : null, grant: resumed ? (record.grant ?? null) : null, delivered: (resumed && record.delivered) || [], outcome };
}

/** What {@link takeResume} found: the cursor, grant and deliveries to resume from (none unless `outcome` is "resumed"). */
export interface TakenResume {
    /** The previous page's last event id, or null. */
    readonly cursor: string | null;
    /** What the hub cookie held when it left, or null. */
    readonly grant: CookieGrant | null;
    /** Its last deliveries, which this page's ledger claims (empty when none). */
    readonly delivered: NonNullable<ResumeRecord["delivered"]>;
    /** Why nothing is resumed, or "resumed". */
    readonly outcome: ResumeOutcome;
}

/** Read and remove the record of `hub`: null when there is none, or it does not parse. */
function readRecord(page: ResumePage, hub: string): ResumeRecord | null {
    try {
        const text = page.storage?.getItem(RESUME_KEY + hub) ?? null;
        page.storage?.removeItem(RESUME_KEY + hub);
        const parsed: unknown = text === null ? null : JSON.parse(text);
        if (typeof parsed !== "object" || parsed === null) return null;
        const { cursor, at, session, grant, delivered } = parsed as Record<string, unknown>;
        const valid = cookieGrant(grant);
        if ((cursor !== null && (typeof cursor !== "string" || cursor === "")) || typeof at !== "number" || typeof session !== "string") return null;
        if (cursor === null && valid === null) return null;
        return { cursor, at, session, ...(valid === null ? {} : { grant: valid }), ...(isDelivered(delivered) ? { delivered: delivered.slice(-DELIVERED_LIMIT) } : {}) };
    } catch {
        return null; // Storage blocked, or not JSON: nothing to resume.
    }
}

/** `value` as a {@link CookieGrant}, or null when it is not one (a record another build wrote, or none). */
function cookieGrant(value: unknown): CookieGrant | null {
    if (typeof value !== "object" || value === null) return null;
    const { names, prefix, sentAt, expiresIn, stamp } = value as Record<string, unknown>;
    const valid =
        Array.isArray(names) && names.every((name) => typeof name === "string") && (prefix === null || typeof prefix === "string") &&
        typeof sentAt === "number" && Number.isFinite(sentAt) && typeof expiresIn === "number" && expiresIn > 0 && Number.isFinite(expiresIn) &&
        typeof stamp === "string" && stamp !== "";
    return valid ? { names: names as string[], prefix: prefix as string | null, sentAt: sentAt as number, expiresIn: expiresIn as number, stamp: stamp as string } : null;
}

/** A delivery ledger's claims (see `delivery-ledger.ts`). */
type Ledger = Pick<DeliveryLedger, "claim" | "clear">;

/**
 * A page's delivery ledger, wrapped to list the last {@link DELIVERED_LIMIT} events claimed, with their channels: what
 * the page leaves to the next in its record ({@link ResumeRecord.delivered}), whose ledger claims them again.
 */
export class ResumeLedger implements Ledger {
    /** The newest claims, oldest first: id → the channels it reached (a Map keeps insertion order). */
    readonly #newest = new Map<string, string[]>();

    /** The ledger it lists the claims of. */
    readonly #ledger: Ledger;

    /** List the claims made on `ledger` from now on. */
    constructor(ledger: Ledger) {
        this.#ledger = ledger;
    }

    /** Claim on the wrapped ledger (see `DeliveryLedger.claim`), and list the pair when it is new. */
    claim(id: string, channel: string): boolean {
        const fresh = this.#ledger.claim(id, channel);
        const channels = this.#newest.get(id);
        if (fresh && channels !== undefined) channels.push(channel);
        else if (fresh) {
            this.#newest.set(id, [channel]);
            if (this.#newest.size > DELIVERED_LIMIT) this.#newest.delete(this.#newest.keys().next().value!);
        }
        return fresh;
    }

    /** Forget everything (after `disconnect()`). */
    clear(): void {
        this.#ledger.clear();
        this.#newest.clear();
    }

    /** The last claims, oldest first, for the record. */
    newest(): Array<[string, string[]]> {
        return [...this.#newest];
    }

    /** Claim what the previous page received (its record's {@link ResumeRecord.delivered}): none of it is delivered again. */
    claimAll(delivered: NonNullable<ResumeRecord["delivered"]>): void {
        for (const [id, channels] of delivered) for (const channel of channels) this.claim(id, channel);
    }
}

/** Whether `value` is a record's {@link ResumeRecord.delivered} (one malformed entry and none is taken). */
function isDelivered(value: unknown): value is NonNullable<ResumeRecord["delivered"]> {
    const text = (item: unknown) => typeof item === "string" && item !== "";
    return (
        Array.isArray(value) &&
        value.every((entry: unknown) => Array.isArray(entry) && entry.length === 2 && text(entry[0]) && Array.isArray(entry[1]) && entry[1].every(text))
    );
}

/** Write the record of `hub` (the page leaves); nothing when storage refuses it (full, blocked). */
export function saveResume(page: ResumePage, hub: string, record: ResumeRecord): void {
    try {
        page.storage?.setItem(RESUME_KEY + hub, JSON.stringify(record));
    } catch {
        // Quota or blocked storage: the next page starts from now, as without the option.
    }
}
