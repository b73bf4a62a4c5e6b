import type { DiscoverHubOptions } from "./discover";
import type { DiscoveredHub } from "./link-element";
import { loadDiscovery } from "./load";

/*
 * The public surface of discovery, for `src/index.ts` to re-export: small enough for the eager bundle.
 * `discoverHub` loads its chunk on first call; `diagnose` is reached through `loadDiagnostics()`. The
 * synchronous link readers (`parseLinkHeader`, `discoverFromDocument`) are the `laravel-echo-mercure/discovery`
 * entry (`./public`), so that nothing of link parsing is in the main one.
 */

export type { DiscoveredHub } from "./link-element";
export { loadDiagnostics, loadDiscovery, type DiagnosticsModule, type DiscoveryModule } from "./load";
export type { DiscoverHubOptions, HubSource, LocateHubOptions } from "./discover";
export type { DiagnoseInput } from "./diagnose";
export type { DiagnosedFailure, Diagnosis, DiagnosisCode } from "./classify";
export type { DiscoveryErrorCode } from "./discovery-error";

/**
 * Find the hub a resource announces in its `Link: <…>; rel="mercure"` header (or, for an HTML answer,
 * in a `<link rel="mercure">`): resolves to the hub URL, the link's `last-event-id` when it has one, and
 * the metadata URL; rejects with a `MercureError` (`discovery_failed`) that says what to add.
 */
export async function discoverHub(resourceUrl: string | URL, options: DiscoverHubOptions = {}): Promise<DiscoveredHub> {
    return (await loadDiscovery()).discoverHub(resourceUrl, options);
}
