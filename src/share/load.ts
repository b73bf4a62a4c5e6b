import { lazyChunk } from "../lazy-chunk";

/** What the lazily loaded engine chunk offers: `./leadership`'s exports (the engine with it). */
export type EngineModule = typeof import("./leadership");

/** Load the hub engine on first use, once per page (a separate chunk: only the leading tab needs it). */
export const loadEngine: () => Promise<EngineModule> = lazyChunk(() => import("./leadership"));
