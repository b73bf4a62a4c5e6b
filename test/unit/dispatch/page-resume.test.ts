import { describe, expect, it } from "vitest";
import { DeliveryLedger } from "../../../src/dispatch/delivery-ledger";
import { DELIVERED_LIMIT, MIN_TOKEN_LENGTH, ResumeLedger, RESUME_KEY, RESUME_MAX_AGE_MS, saveResume, sessionFingerprint, takeResume, type ResumePage } from "../../../src/dispatch/page-resume";

const HUB = "https://app.test/.well-known/mercure";
const TOKEN = "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n"; // 40 characters, as Laravel's Str::random(40)
const SESSION = sessionFingerprint(TOKEN)!;

/** A page of one tab on an in-memory storage, the `historyLength`-th entry of its history, at time `now`. */
function page(overrides: Partial<ResumePage> = {}, store = new Map<string, string>()): ResumePage & { store: Map<string, string> } {
    const storage = {
        getItem: (key: string) => store.get(key) ?? null,
        setItem: (key: string, value: string) => void store.set(key, value),
        removeItem: (key: string) => void store.delete(key),
    };
    return { storage, historyLength: 2, navigation: "navigate", now: () => 1_000_000, startedAt: 1_000_000 - 10_000, store, ...overrides };
}

describe("sessionFingerprint", () => {
    it("tells two session tokens apart, and gives one token the same fingerprint every time", () => {
        const other = sessionFingerprint(TOKEN.slice(0, -1) + "m");
        expect(SESSION).toMatch(/^[0-9a-z]+$/);
        expect(other).not.toBe(SESSION);
        expect(sessionFingerprint(TOKEN)).toBe(SESSION);
    });

    it("fingerprints no token shorter than a random session token, and nothing that is not a string", () => {
        expect(sessionFingerprint("x".repeat(MIN_TOKEN_LENGTH - 1))).toBeNull();
        expect(sessionFingerprint("x".repeat(MIN_TOKEN_LENGTH))).not.toBeNull();
        expect(sessionFingerprint(undefined)).toBeNull();
        expect(sessionFingerprint(null)).toBeNull();
    });

    it("holds at most 53 bits: the token is not in it", () => {
        expect(parseInt(SESSION, 36)).toBeLessThan(2 ** 53);
        expect(SESSION).not.toContain(TOKEN.slice(0, 6).toLowerCase());
    });
});

describe("takeResume", () => {
    const write = (p: ResumePage, at = 1_000_000 - 5_000, session = SESSION) => saveResume(p, HUB, { cursor: "urn:uuid:41", at, session });

    it("gives the cursor the previous page of the tab left for this hub, once", () => {
        const next = page();
        write(next);
        expect(takeResume(next, HUB, SESSION)).toMatchObject({ cursor: "urn:uuid:41", outcome: "resumed" });
        expect(next.store.size).toBe(0);
        expect(takeResume(next, HUB, SESSION)).toMatchObject({ cursor: null, outcome: "none" });
    });

    it("keeps one record per hub", () => {
        const next = page();
        write(next);
        expect(takeResume(next, "https://other.test/.well-known/mercure", SESSION)).toMatchObject({ cursor: null, outcome: "none" });
        expect(takeResume(next, HUB, SESSION).cursor).toBe("urn:uuid:41");
    });

    it("resumes nothing in another session (a login, a logout, another user), and removes the record", () => {
        const next = page();
        write(next);
        expect(takeResume(next, HUB, sessionFingerprint("Z".repeat(40)))).toMatchObject({ cursor: null, outcome: "other session" });
        expect(next.store.size).toBe(0);
    });

    it("resumes nothing from a record older than this page's navigation: a page in between did not take it", () => {
        const later = page({ startedAt: 1_000_000 - 4_000 });
        write(later, 1_000_000 - 5_000);
        expect(takeResume(later, HUB, SESSION)).toMatchObject({ cursor: null, outcome: "earlier page" });
        expect(later.store.size).toBe(0);
    });

    it("resumes nothing on a page without a session token", () => {
        const next = page();
        write(next);
        expect(takeResume(next, HUB, null)).toMatchObject({ cursor: null, outcome: "no session" });
    });

    it(`resumes nothing ${RESUME_MAX_AGE_MS / 1000} s or more after the previous page left, nor from a time to come`, () => {
        const late = page({ startedAt: 0 });
        write(late, 1_000_000 - RESUME_MAX_AGE_MS);
        expect(takeResume(late, HUB, SESSION)).toMatchObject({ cursor: null, outcome: "too old" });
        const justInTime = page({ startedAt: 0 });
        write(justInTime, 1_000_000 - RESUME_MAX_AGE_MS + 1);
        expect(takeResume(justInTime, HUB, SESSION).outcome).toBe("resumed");
        const future = page();
        write(future, 1_000_000 + 1);
        expect(takeResume(future, HUB, SESSION).outcome).toBe("too old");
    });

    it("resumes nothing on a tab's first page (a new tab into which the opener's storage was copied), but does on its reload", () => {
        const opened = page({ historyLength: 1 });
        write(opened);
        expect(takeResume(opened, HUB, SESSION)).toMatchObject({ cursor: null, outcome: "first page" });
        expect(opened.store.size).toBe(0); // Not left for the new tab's next page either.
        const reloaded = page({ historyLength: 1, navigation: "reload" });
        write(reloaded);
        expect(takeResume(reloaded, HUB, SESSION).outcome).toBe("resumed");
    });

    it("reads a record that does not parse, or has the wrong shape, as none", () => {
        for (const text of ["{", "null", "[]", '{"cursor":"","at":1,"session":"x"}', '{"cursor":"a","at":"1","session":"x"}']) {
            const next = page();
            next.store.set(RESUME_KEY + HUB, text);
            expect(takeResume(next, HUB, SESSION)).toMatchObject({ cursor: null, outcome: "none" });
            expect(next.store.size).toBe(0);
        }
    });

    it("goes on without storage, or with storage that throws", () => {
        expect(takeResume(page({ storage: undefined }), HUB, SESSION).outcome).toBe("none");
        const throwing = { getItem: () => { throw new Error("blocked"); }, setItem: () => { throw new Error("quota"); }, removeItem: () => undefined };
        const blocked = page({ storage: throwing });
        expect(() => write(blocked)).not.toThrow();
        expect(takeResume(blocked, HUB, SESSION).outcome).toBe("none");
    });
});

describe("the record's cookie grant (issue 53's navigation)", () => {
    const GRANT = { names: ["private-orders.1", "news"], prefix: "https://laravel.alt/echo/", sentAt: 990_000, expiresIn: 300, stamp: "s1" };

    it("gives the grant back with or without a cursor, on the same checks as the cursor", () => {
        const previous = page();
        saveResume(previous, HUB, { cursor: null, at: 1_000_000 - 5_000, session: SESSION, grant: GRANT });
        expect(takeResume(page({}, previous.store), HUB, SESSION)).toEqual({ cursor: null, grant: GRANT, delivered: [], outcome: "resumed" });
        saveResume(previous, HUB, { cursor: "urn:uuid:1", at: 1_000_000 - 5_000, session: SESSION, grant: GRANT });
        expect(takeResume(page({}, previous.store), HUB, "another-session")).toEqual({ cursor: null, grant: null, delivered: [], outcome: "other session" });
    });

    it("ignores a malformed grant, and a record with neither a cursor nor a grant", () => {
        const malformed = [{ ...GRANT, stamp: "" }, { ...GRANT, expiresIn: 0 }, { ...GRANT, names: [1] }, { ...GRANT, prefix: 3 }, { ...GRANT, sentAt: Number.NaN }, "grant"];
        for (const grant of malformed) {
            const previous = page();
            previous.store.set(RESUME_KEY + HUB, JSON.stringify({ cursor: "urn:uuid:2", at: 1_000_000 - 5_000, session: SESSION, grant }));
            expect(takeResume(page({}, previous.store), HUB, SESSION)).toMatchObject({ cursor: "urn:uuid:2", grant: null });
            previous.store.set(RESUME_KEY + HUB, JSON.stringify({ cursor: null, at: 1_000_000 - 5_000, session: SESSION, grant }));
            expect(takeResume(page({}, previous.store), HUB, SESSION)).toMatchObject({ outcome: "none", grant: null });
        }
    });
});


describe("the record's deliveries (what the previous page received, delivered once)", () => {
    const AT = 1_000_000 - 5_000;
    const DELIVERED: Array<[string, string[]]> = [["urn:uuid:1", ["orders"]], ["urn:uuid:2", ["orders", "news"]]];

    it("gives them back when the page resumes, and none when it does not", () => {
        const previous = page();
        saveResume(previous, HUB, { cursor: "urn:uuid:2", at: AT, session: SESSION, delivered: DELIVERED });
        expect(takeResume(page({}, previous.store), HUB, SESSION)).toEqual({ cursor: "urn:uuid:2", grant: null, delivered: DELIVERED, outcome: "resumed" });
        saveResume(previous, HUB, { cursor: "urn:uuid:2", at: AT, session: SESSION, delivered: DELIVERED });
        expect(takeResume(page({ historyLength: 1 }, previous.store), HUB, SESSION)).toMatchObject({ delivered: [], outcome: "first page" });
    });

    it(`keeps the newest ${DELIVERED_LIMIT} of a longer list, and takes none from a malformed one (the cursor still resumes)`, () => {
        const previous = page();
        const long = Array.from({ length: DELIVERED_LIMIT + 3 }, (_, n): [string, string[]] => [`urn:uuid:${n}`, ["orders"]]);
        saveResume(previous, HUB, { cursor: "urn:uuid:2", at: AT, session: SESSION, delivered: long });
        expect(takeResume(page({}, previous.store), HUB, SESSION).delivered).toEqual(long.slice(3));
        const malformed = [[["urn:uuid:1"]], [["", ["orders"]]], [["urn:uuid:1", 2]], [["urn:uuid:1", "orders"]], [["urn:uuid:1", ["orders", ""]]], [["urn:uuid:1", ["orders"], "news"]], "urn:uuid:1", { 0: 1 }];
        for (const delivered of malformed) {
            previous.store.set(RESUME_KEY + HUB, JSON.stringify({ cursor: "urn:uuid:2", at: AT, session: SESSION, delivered }));
            expect(takeResume(page({}, previous.store), HUB, SESSION)).toMatchObject({ cursor: "urn:uuid:2", delivered: [], outcome: "resumed" });
        }
    });
});

describe("ResumeLedger", () => {
    it("claims on the ledger it wraps, and lists the newest claims with their channels, oldest first", () => {
        const inner = new DeliveryLedger();
        inner.claim("0", "a"); // Claimed before the wrap: known, not listed.
        const ledger = new ResumeLedger(inner);
        expect(ledger.claim("0", "a")).toBe(false);
        expect([ledger.claim("1", "a"), ledger.claim("2", "a"), ledger.claim("2", "b"), ledger.claim("2", "b")]).toEqual([true, true, true, false]);
        expect(ledger.newest()).toEqual([["1", ["a"]], ["2", ["a", "b"]]]);
        for (let n = 3; n < DELIVERED_LIMIT + 3; n++) ledger.claim(String(n), "a");
        expect(ledger.newest()).toHaveLength(DELIVERED_LIMIT);
        expect(ledger.newest()[0]).toEqual(["3", ["a"]]);
        expect(inner.claim("2", "b")).toBe(false);
        ledger.clear();
        expect([ledger.newest(), inner.claim("2", "b")]).toEqual([[], true]);
        // The previous page's deliveries, claimed: none comes again, and they pass on to the page after.
        ledger.claimAll([["x", ["a", "b"]]]);
        expect([inner.claim("x", "a"), inner.claim("x", "b"), inner.claim("x", "c")]).toEqual([false, false, true]);
        expect(ledger.newest()).toEqual([["x", ["a", "b"]]]);
    });
});
