/** What the lazily loaded hub-token chunk offers: `./hub-token`'s exports (the token source, the fetch that adds it). */
export type HubTokenModule = typeof import("./hub-token");

/** The one in-flight or finished load, shared by every connector of the page; cleared when a load fails. */
let loading: Promise<HubTokenModule> | undefined;

/**
 * Load the `hubToken` machinery on first use, once per page (a separate chunk in the ESM and CJS builds): only a
 * connector with the `hubToken` option (header auth) needs it, before its first auth request.
 */
export function loadHubToken(): Promise<HubTokenModule> {
    loading ??= import("./hub-token").catch((error: unknown) => {
        loading = undefined; // A chunk that failed to download (offline, a deploy in between) is retried next time.
        throw error;
    });
    return loading;
}
