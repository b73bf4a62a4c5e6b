// Types of test/reference-hub/hub.mjs for the TypeScript test helpers that import it (test/support/reference-hub.ts).

/** The hub versions there are programs for, and the folder of each one's program. */
export const REFERENCE_HUB_VERSIONS: { readonly "v1.0.0-alpha.3": "v1"; readonly "v0.24.2": "v0" };

/** A reference hub version. */
export type ReferenceHubVersion = keyof typeof REFERENCE_HUB_VERSIONS;

/** The version the suites and the bench run against by default. */
export const CURRENT_HUB: ReferenceHubVersion;

/** The one-line fix when Go is missing. */
export const INSTALL_HINT: string;

/** Where the binary of `version` is cached (a folder named after a hash of its sources). */
export function referenceHubBinary(version: ReferenceHubVersion): string;

/** Whether a Go toolchain answers on this machine. */
export function hasGo(): boolean;

/** Build `version` unless its binary is cached; resolves to the binary's path, throws with the `go` output on failure. */
export function buildReferenceHub(version: ReferenceHubVersion): string;

/** How a reference hub is configured; the names follow the dev hub's options where they mean the same. */
export interface ReferenceHubConfig {
    /** The HS256 key of publishers and subscribers. */
    jwtKey: string;
    /** The trusted issuer (1.0 only). */
    issuer: string;
    /** The resource identifier tokens must carry in `aud` (1.0 only). */
    resource: string;
    /** The authorization cookie's name. */
    cookieName: string;
    /** CORS origins (credentials allowed). */
    corsOrigins?: readonly string[];
    /** Origins allowed to publish with the cookie. */
    publishOrigins?: readonly string[];
    /** Keep history (a bolt file in a temporary folder); default true. */
    history?: boolean;
    /** Accept subscribers without a token; default false, the Go hub's default. */
    anonymous?: boolean;
    /** The subscriptions API and subscription events; default true. */
    subscriptions?: boolean;
    /** Longest life of a stream, in ms; default 600 000. */
    writeTimeout?: number;
    /** Longest single write, in ms; default 5 000. */
    dispatchTimeout?: number;
    /** Keep-alive interval, in ms; default 40 000. */
    heartbeatMs?: number;
}

/** A running reference hub. */
export interface ReferenceHub {
    /** The version running. */
    readonly version: ReferenceHubVersion;
    /** Its hub URL, `http://127.0.0.1:<port>/.well-known/mercure`. */
    readonly url: string;
    /** What it logged so far (stderr). */
    log(): string;
    /** Stop it (SIGTERM, then SIGKILL after 5 s) and remove its history. */
    close(): Promise<void>;
}

/** Start `version` (built) on a free loopback port; resolves once it listens. */
export function startReferenceHub(version: ReferenceHubVersion, config: ReferenceHubConfig): Promise<ReferenceHub>;
