/*
 * The only discovery code a connector imports eagerly: two loaders. Everything else (discovery when
 * `host` is absent, diagnostics after a failure) is a separate chunk fetched on first use.
 */

/** What the lazily loaded diagnostics chunk offers: `./diagnose`'s exports. */
export type DiagnosticsModule = typeof import("./diagnose");

/** What the lazily loaded discovery chunk offers: `./discover`'s exports. */
export type DiscoveryModule = typeof import("./discover");

/** The one in-flight or finished load of the diagnostics chunk; cleared when a load fails so that it can retry. */
let diagnostics: Promise<DiagnosticsModule> | undefined;

/** The one in-flight or finished load of the discovery chunk; cleared when a load fails so that it can retry. */
let discovery: Promise<DiscoveryModule> | undefined;

/** Load `diagnose()` and its helpers on first use, once per page. */
export function loadDiagnostics(): Promise<DiagnosticsModule> {
    diagnostics ??= import("./diagnose").catch((error: unknown) => {
        diagnostics = undefined; // A chunk that failed to download (offline, a deploy in between) is retried next time.
        throw error;
    });
    return diagnostics;
}

/** Load `discoverHub()` and `locateHub()` on first use, once per page. */
export function loadDiscovery(): Promise<DiscoveryModule> {
    discovery ??= import("./discover").catch((error: unknown) => {
        discovery = undefined;
        throw error;
    });
    return discovery;
}
