import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { MercureHubOptions } from "../../src/dev/hub/options";
import type { ExternalHub, ExternalHubContext } from "../../src/dev/server";

// The reference Mercure hub (the Go module github.com/dunglas/mercure, built from test/reference-hub/) for the
// test suites: built once per source into an ignored cache folder, started per suite on a free loopback port.

/** The repository root. */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The hub versions the suites run against, and the folder of each one's program. */
export const REFERENCE_HUB_VERSIONS = { "v1.0.0-alpha.3": "v1", "v0.24.2": "v0" } as const;

/** A reference hub version. */
export type ReferenceHubVersion = keyof typeof REFERENCE_HUB_VERSIONS;

/** The version the suites run against by default; `REFERENCE_HUB_VERSION` would not change which programs exist. */
export const CURRENT_HUB: ReferenceHubVersion = "v1.0.0-alpha.3";

/** The one-line fix, shared by the CI failure and the local warning. */
const INSTALL_HINT = "install Go 1.26 (https://go.dev/dl/, or your package manager) with access to the Go module proxy";

/**
 * Where the binary of `version` is cached: a folder named after a hash of its sources, so that a change of the
 * program, its `go.mod` or `go.sum` builds it again.
 */
export function referenceHubBinary(version: ReferenceHubVersion): string {
    const folder = REFERENCE_HUB_VERSIONS[version];
    const hash = createHash("sha256");
    for (const file of [`${folder}/main.go`, `${folder}/go.mod`, `${folder}/go.sum`, "serve/serve.go", "serve/go.mod"]) {
        hash.update(file).update(readFileSync(join(ROOT, "test/reference-hub", file)));
    }
    return join(ROOT, ".cache/reference-hub", `${folder}-${hash.digest("hex").slice(0, 16)}`, "mercure-hub");
}

/** Whether a Go toolchain answers on this machine. */
export function hasGo(): boolean {
    return spawnSync("go", ["version"], { stdio: "ignore" }).status === 0;
}

/**
 * Build `version` unless its binary is cached; throws with the `go` output when the build fails. Writes to a
 * temporary name first, so a concurrent caller never runs half a file.
 */
export function buildReferenceHub(version: ReferenceHubVersion): string {
    const binary = referenceHubBinary(version);
    if (existsSync(binary)) return binary;
    mkdirSync(join(binary, ".."), { recursive: true });
    const partial = `${binary}.${process.pid}.partial`;
    const result = spawnSync("go", ["build", "-trimpath", "-o", partial, "."], {
        cwd: join(ROOT, "test/reference-hub", REFERENCE_HUB_VERSIONS[version]),
        encoding: "utf8",
        // go.sum pins every module; the checksum database is not reachable everywhere the module proxy is.
        env: { ...process.env, GOFLAGS: "-mod=readonly -buildvcs=false", GOSUMDB: "off" },
        timeout: 600_000,
    });
    if (result.status !== 0) {
        rmSync(partial, { force: true });
        throw new Error(`go build of the reference hub ${version} failed (exit ${String(result.status)}):\n${result.stderr}${result.error?.message ?? ""}`);
    }
    renameSync(partial, binary);
    return binary;
}

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

/** How a test configures a reference hub; the names follow the dev hub's options where they mean the same. */
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

/** Start `version` on a free loopback port; resolves once it listens. */
export async function startReferenceHub(version: ReferenceHubVersion, config: ReferenceHubConfig): Promise<ReferenceHub> {
    const binary = referenceHubBinary(version);
    if (!existsSync(binary)) {
        throw new Error(`The reference hub ${version} is not built (${binary}): run the tests with Go installed (${INSTALL_HINT}).`);
    }
    const folder = mkdtempSync(join(tmpdir(), "reference-hub-"));
    const args = [
        "-addr", "127.0.0.1:0",
        "-key", config.jwtKey,
        "-issuer", config.issuer,
        "-resource", config.resource,
        "-cookie", config.cookieName,
        "-cors", (config.corsOrigins ?? []).join(","),
        "-publish-origins", (config.publishOrigins ?? []).join(","),
        "-history", config.history === false ? "" : join(folder, "history.db"),
        `-anonymous=${String(config.anonymous ?? false)}`,
        `-subscriptions=${String(config.subscriptions ?? true)}`,
        "-write-timeout", `${config.writeTimeout ?? 600_000}ms`,
        "-dispatch-timeout", `${config.dispatchTimeout ?? 5_000}ms`,
        "-heartbeat", `${config.heartbeatMs ?? 40_000}ms`,
    ];
    const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
    let log = "";
    child.stderr.setEncoding("utf8").on("data", (text: string) => (log += text));
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    let origin: string;
    try {
        origin = await listeningOrigin(child, () => log);
    } catch (error) {
        child.kill("SIGKILL");
        rmSync(folder, { recursive: true, force: true });
        throw error;
    }
    return {
        version,
        url: `${origin}/.well-known/mercure`,
        log: () => log,
        close: async () => {
            if (child.exitCode === null && child.signalCode === null) {
                child.kill("SIGTERM");
                const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
                await exited;
                clearTimeout(timer);
            }
            rmSync(folder, { recursive: true, force: true });
        },
    };
}

/** Resolve with the origin the hub prints once it listens; reject when it exits first or takes over 10 s. */
function listeningOrigin(child: ChildProcess, log: () => string): Promise<string> {
    return new Promise((resolve, reject) => {
        let out = "";
        const timer = setTimeout(() => reject(new Error(`The reference hub did not start within 10 s:\n${log()}`)), 10_000);
        child.stdout?.setEncoding("utf8").on("data", (text: string) => {
            out += text;
            const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
            if (found === null) return;
            clearTimeout(timer);
            resolve(found[1]!);
        });
        child.once("exit", (code) => {
            clearTimeout(timer);
            reject(new Error(`The reference hub exited with ${String(code)} before listening:\n${log()}`));
        });
    });
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
