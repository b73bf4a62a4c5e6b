// Build and start the reference Mercure hub (the Go programs in this folder, serving the published module
// github.com/dunglas/mercure): plain JavaScript, shared by the test suites (test/support/reference-hub.ts) and
// the bench (bench/lib/stack.mjs). Types in hub.d.mts.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The hub versions there are programs for, and the folder of each one's program. */
export const REFERENCE_HUB_VERSIONS = Object.freeze({ "v1.0.0-alpha.3": "v1", "v0.24.2": "v0" });

/** The version the suites and the bench run against by default. */
export const CURRENT_HUB = "v1.0.0-alpha.3";

/** The one-line fix when Go is missing, shared by the CI failure, the local warning and the bench. */
export const INSTALL_HINT = "install Go 1.26 (https://go.dev/dl/, or your package manager) with access to the Go module proxy";

/**
 * Where the binary of `version` is cached: a folder named after a hash of its sources, so that a change of the
 * program, its `go.mod` or `go.sum` builds it again.
 */
export function referenceHubBinary(version) {
    const folder = REFERENCE_HUB_VERSIONS[version];
    const hash = createHash("sha256");
    for (const file of [`${folder}/main.go`, `${folder}/go.mod`, `${folder}/go.sum`, "serve/serve.go", "serve/go.mod"]) {
        hash.update(file).update(readFileSync(join(ROOT, "test/reference-hub", file)));
    }
    return join(ROOT, ".cache/reference-hub", `${folder}-${hash.digest("hex").slice(0, 16)}`, "mercure-hub");
}

/** Whether a Go toolchain answers on this machine. */
export function hasGo() {
    return spawnSync("go", ["version"], { stdio: "ignore" }).status === 0;
}

/**
 * Build `version` unless its binary is cached; throws with the `go` output when the build fails. Writes to a
 * temporary name first, so a concurrent caller never runs half a file.
 */
export function buildReferenceHub(version) {
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

/** Start `version` (built) on a free loopback port, configured by `config` (see hub.d.mts); resolves once it listens. */
export async function startReferenceHub(version, config) {
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
    child.stderr.setEncoding("utf8").on("data", (text) => (log += text));
    const exited = new Promise((resolve) => child.once("exit", () => resolve()));
    let origin;
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
function listeningOrigin(child, log) {
    return new Promise((resolve, reject) => {
        let out = "";
        const timer = setTimeout(() => reject(new Error(`The reference hub did not start within 10 s:\n${log()}`)), 10_000);
        child.stdout.setEncoding("utf8").on("data", (text) => {
            out += text;
            const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
            if (found === null) return;
            clearTimeout(timer);
            resolve(found[1]);
        });
        child.once("exit", (code) => {
            clearTimeout(timer);
            reject(new Error(`The reference hub exited with ${String(code)} before listening:\n${log()}`));
        });
    });
}
