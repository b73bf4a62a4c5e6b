/*
 * The auth stamp (issue 53's navigation): every batch auth request a connector or the tabs' engine sends writes a new
 * random stamp into the origin's `localStorage`, once the request has left; its granted answer carries that stamp. The
 * browser keeps one hub cookie for every tab and page of the origin, and a request of any of them may replace it: a page
 * that finds the stamp of its previous page's last grant still there knows that no auth request was sent since, so the
 * hub cookie still holds that grant (until it expires). The stamp is random, says nothing of the user, and is no
 * credential (SECURITY.md).
 */

/** The `localStorage` key of the stamp. */
export const AUTH_STAMP_KEY = "laravel-echo-mercure:auth";

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

/** The stamp of the last auth request sent in this browser's origin, or null (none, or no storage). */
export function readAuthStamp(stamps?: StampStorage): string | null {
    try {
        return storageOf(stamps).getItem(AUTH_STAMP_KEY);
    } catch {
        return null;
    }
}
