import { CAPABILITY_SLOTS } from "../connector/capability-slots";
import { loadSetup } from "../transport/platform";

/**
 * Load every lazy chunk the connector may ask for (presence, encrypted channels, whispers, diagnostics and the stream's
 * probe, the search for a failing channel, the platform set-up), through the connector's own loaders and the same files
 * they import, so that the connector finds them loaded or settles its `import()` of them within microtasks and
 * `hub.flush()` needs no timer.
 */
export async function preloadChunks(): Promise<void> {
    // The kit's connectors pass the eventSource and fetch options: they use the platform set-up (the EventSource adapter;
    // without a page, no DOM or jsdom's about:blank, the checks). Loaded first, on its own: Jest 30's ESM loader fails to
    // link it while it links the whisper chunk too ("request for './core-….js' is not in cache").
    await loadSetup();
    await Promise.all([
        ...CAPABILITY_SLOTS.map((slot) => slot.chunk()),
        import("../discovery/diagnose"),
        import("../connector/stream-diagnosis"),
        import("../connector/batch-isolation"),
    ]);
}
