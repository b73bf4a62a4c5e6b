/** What the lazily loaded whisper chunk offers: `./index`'s exports (publisher, streams, envelope rules). */
export type WhisperModule = typeof import("./index");

/** The one in-flight or finished load, shared by every connector of the page; cleared when a load fails. */
let loading: Promise<WhisperModule> | undefined;

/**
 * Load the whisper publisher and streams on first use, once per page (a separate chunk in the ESM and
 * CJS builds): a page that never whispers nor listens for whispers never downloads them.
 */
export function loadWhispers(): Promise<WhisperModule> {
    loading ??= import("./index").catch((error: unknown) => {
        loading = undefined; // A chunk that failed to download (offline, a deploy in between) is retried next time.
        throw error;
    });
    return loading;
}
