import { describe } from "vitest";
import { startDevServer, type DevServer, type DevServerOptions } from "../../src/dev/server";
import { CURRENT_HUB, referenceExternalHub, referenceHubAvailable, type ReferenceHubVersion } from "./reference-hub";

// The hubs every end-to-end suite runs against: the project's dev hub and the reference Go hub. A suite runs
// once per hub rather than being copied; one that needs what only the dev hub offers (its deterministic
// stream lifetimes, in-process publishing, its refusal log) says so by passing DEV_HUB_ONLY with a reason.

/** One hub a suite runs against. */
export interface HubTarget {
    /** Shown in the suite's title, e.g. `dev hub`, `reference hub v1.0.0-alpha.3`. */
    readonly name: string;
    /** The reference hub version, or null for the embedded dev hub. */
    readonly reference: ReferenceHubVersion | null;
    /** Whether the suite runs here (the reference hub is built, or CI, where a missing one fails). */
    readonly available: boolean;
    /** `options` for a dev server whose hub is this one, configured as `options.hub` asks. */
    configure<T extends DevServerOptions>(options: T): T;
    /** Start a dev server (the Laravel stand-in) whose hub is this one, configured as `options.hub` asks. */
    start(options?: DevServerOptions): Promise<DevServer>;
}

/** The embedded dev hub. */
export const DEV_HUB: HubTarget = {
    name: "dev hub",
    reference: null,
    available: true,
    configure: (options) => options,
    start: (options = {}) => startDevServer(options),
};

/** The reference hub at `version`. */
export function referenceHub(version: ReferenceHubVersion = CURRENT_HUB): HubTarget {
    const configure = <T extends DevServerOptions>(options: T): T => ({ ...options, externalHub: referenceExternalHub(version, options.hub) });
    return {
        name: `reference hub ${version}`,
        reference: version,
        available: referenceHubAvailable(version),
        configure,
        start: (options = {}) => startDevServer(configure(options)),
    };
}

/** Every hub a suite runs against by default. */
export const ALL_HUBS: readonly HubTarget[] = [DEV_HUB, referenceHub()];

/** Only the dev hub (pass with a comment saying what the reference hub cannot offer the suite). */
export const DEV_HUB_ONLY: readonly HubTarget[] = [DEV_HUB];

/** `describe(title)` once per hub in `hubs`, skipped where that hub is not available; `body` gets the hub. */
export function describeEachHub(title: string, hubs: readonly HubTarget[], body: (hub: HubTarget) => void): void {
    for (const hub of hubs) describe.skipIf(!hub.available)(`${title} [${hub.name}]`, () => body(hub));
}
