import { existsSync } from "node:fs";
import type { MercureHubOptions } from "../../src/dev/hub/options";
import type { ExternalHub, ExternalHubContext } from "../../src/dev/server";
import {
    buildReferenceHub,
    CURRENT_HUB,
    hasGo,
    INSTALL_HINT,
    REFERENCE_HUB_VERSIONS,
    referenceHubBinary,
    startReferenceHub,
    type ReferenceHub,
    type ReferenceHubVersion,
} from "../reference-hub/hub.mjs";

// The reference Mercure hub (the Go module github.com/dunglas/mercure, built from test/reference-hub/) for the
// test suites: built once per source into an ignored cache folder, started per suite on a free loopback port.
// Building and starting live in test/reference-hub/hub.mjs, which the bench shares; this file adds what only the
// suites need (skipping without Go, the dev server's externalHub, the logs of failing tests).

export {
    buildReferenceHub,
    CURRENT_HUB,
    hasGo,
    REFERENCE_HUB_VERSIONS,
    referenceHubBinary,
    startReferenceHub,
    type ReferenceHub,
    type ReferenceHubConfig,
    type ReferenceHubVersion,
} from "../reference-hub/hub.mjs";

/**
 * Whether the suites run against the reference hub: yes when its binary is built; in CI (`CI=true`) also when it
 * is not, so that {@link startReferenceHub} fails them loudly; locally without Go they skip after one warning.
 */
export function referenceHubAvailable(version: ReferenceHubVersion = CURRENT_HUB): boolean {
    return existsSync(referenceHubBinary(version)) || process.env["CI"] === "true";
}

/** Build every version for a test run (vitest's global set-up); warns and goes on locally without Go. */
export function prepareReferenceHubs(): void {
    if (!hasGo()) {
        if (process.env["CI"] === "true") throw new Error(`CI=true and no Go toolchain: the reference hub cannot be built (${INSTALL_HINT}).`);
        console.warn(`\n!! The reference Mercure hub suites are SKIPPED: no Go toolchain. To run them, ${INSTALL_HINT}.\n`);
        return;
    }
    for (const version of Object.keys(REFERENCE_HUB_VERSIONS) as ReferenceHubVersion[]) buildReferenceHub(version);
}

/**
 * The `externalHub` option of `startDevServer` that starts `version` configured as `hub` configures the dev hub
 * (anonymous, history, timeouts, CORS origins), with the stack's key, issuer, cookie and audience.
 */
export function referenceExternalHub(
    version: ReferenceHubVersion,
    hub: Partial<Omit<MercureHubOptions, "jwtKey">> = {},
): (stack: ExternalHubContext) => Promise<ExternalHub> {
    return async (stack) => {
        const running = await startReferenceHub(version, {
            jwtKey: stack.jwtKey,
            issuer: stack.issuer,
            resource: hub.resource ?? stack.publicUrl,
            // The Go hub always reads its cookie: a name the app never sets stands for a hub that takes none.
            cookieName: hub.cookieAuth === false ? "reference_hub_reads_no_cookie" : stack.cookieName,
            corsOrigins: hub.corsOrigins ?? [],
            publishOrigins: hub.publishOrigins ?? [stack.origin],
            ...(hub.history !== undefined ? { history: hub.history } : {}),
            ...(hub.anonymous !== undefined ? { anonymous: hub.anonymous } : {}),
            ...(hub.subscriptions !== undefined ? { subscriptions: hub.subscriptions } : {}),
            ...(hub.writeTimeout !== undefined ? { writeTimeout: hub.writeTimeout } : {}),
            ...(hub.dispatchTimeout !== undefined ? { dispatchTimeout: hub.dispatchTimeout } : {}),
            ...(hub.heartbeatMs !== undefined ? { heartbeatMs: hub.heartbeatMs } : {}),
        });
        referenceHubLogs.add(running);
        return {
            url: running.url,
            close: async () => {
                referenceHubLogs.delete(running);
                await running.close();
            },
        };
    };
}

/** The reference hubs running now, whose logs a failing test prints. */
export const referenceHubLogs = new Set<ReferenceHub>();
