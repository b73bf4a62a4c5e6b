import { lazyChunk } from "../lazy-chunk";

/** What the lazily loaded whisper chunk offers: `./index`'s exports (publisher, streams, envelope rules). */
export type WhisperModule = typeof import("./index");

/**
 * Load the whisper publisher and streams on first use, once per page (a separate chunk in the ESM and
 * CJS builds): a page that never whispers nor listens for whispers never downloads them.
 */
export const loadWhispers: () => Promise<WhisperModule> = lazyChunk(() => import("./index"));
