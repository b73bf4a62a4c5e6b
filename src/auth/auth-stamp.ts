/*
 * The auth stamp (issue 53's navigation): every batch auth request a connector or the tabs' engine sends writes a new
 * random stamp into the origin's `localStorage`, once the request has left; its granted answer carries that stamp. The
 * browser keeps one hub cookie for every tab and page of the origin, and a request of any of them may replace it: a page
 * that finds the stamp of its previous page's last grant still there knows that no auth request was sent since, so the
 * hub cookie still holds that grant (until it expires). The stamp is random, says nothing of the user, and is no
 * credential (SECURITY.md).
 *
 * Two requests in flight at once (two tabs that run alone, a tab and the tabs' engine) are answered in any order, and
 * the cookie is the last answer's, not the last request's: each granted answer writes its request's stamp again, under
 * a second key, once it has arrived (its `Set-Cookie` applied): the cookie holds the grant of the request that key
 * names (see `BatchAuth.cookieReplaced`), and a page's previous grant only while both keys still name its request
 * (see `ResumeCapability`).
 */

/** The `localStorage` key of the stamp. */
export const AUTH_STAMP_KEY = "laravel-echo-mercure:auth";

/** The `localStorage` key of the stamp of the last granted answer (see above). */
export const ANSWER_STAMP_KEY = "laravel-echo-mercure:auth-answer";

/** The part of `localStorage` the stamp uses. */
export type StampStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

/** A stamp an auth request wrote, and the one it replaced (null: none). */
export interface Stamped {
    readonly stamp: string;
    readonly replaced: string | null;
}

/**
 * `stamps` when given (tests: one browser's storage), else a page's `localStorage` (not Node.js's, whose access without a
 * storage file warns); undefined outside a page (its use throws, as a blocked storage's does: both are caught).
 */
const storageOf = (stamps: StampStorage | undefined): StampStorage => stamps ?? (((globalThis as { document?: unknown }).document && localStorage) as StampStorage);

/**
 * Write a new stamp (an auth request has just left); returns it and the stamp it replaced, or undefined where it could
 * not be written (no storage, or full: then the older stamp is removed, so that no page trusts the grant it names).
 */
export function stampAuth(stamps?: StampStorage): Stamped | undefined {
    try {
        const storage = storageOf(stamps);
        const replaced = storage.getItem(AUTH_STAMP_KEY);
        const stamp = Math.random().toString(36).slice(2);
        storage.setItem(AUTH_STAMP_KEY, stamp);
        return { stamp, replaced };
    } catch {
        try {
            storageOf(stamps).removeItem(AUTH_STAMP_KEY);
        } catch {
            // No storage, or blocked: no page reads a stamp either.
        }
        return undefined;
    }
}

/**
 * The granted answer to the request stamped `stamp` has arrived: its stamp is written under {@link ANSWER_STAMP_KEY}
 * (nothing where the storage is missing or blocked).
 */
export function stampAnswer(stamp: string, stamps?: StampStorage): void {
    try {
        storageOf(stamps).setItem(ANSWER_STAMP_KEY, stamp);
    } catch {
        // No storage: no page reads a stamp either.
    }
}

/** The stamp under `key` ({@link AUTH_STAMP_KEY} or {@link ANSWER_STAMP_KEY}); null: none, or no storage. */
export function readStamp(stamps: StampStorage | undefined, key: string): string | null {
    try {
        return storageOf(stamps).getItem(key);
    } catch {
        return null;
    }
}
