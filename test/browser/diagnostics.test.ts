import { copyFileSync, cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { rollup } from "rollup";
import ts from "typescript";
import { beforeAll, expect, it } from "vitest";
import { startDevHub } from "../../src/dev/hub";
import { startDevServer } from "../../src/dev/server";
import { referenceExternalHub } from "../support/reference-hub";
import { deploy, OTHER_RESOURCE, type Deployment, type DeploymentKind } from "../e2e/support/deployments";
import type { PageHarness } from "./support/harness";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { describeInChromium, DIST_DIR } from "./support/suite";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PAGE = "/diagnostics.html";
const CONNECTOR_PAGE = "/connector.html";

/**
 * Bundle `src/discovery/diagnose.ts` as one ES module, transpiling TypeScript file by file: what the
 * connector's lazy chunk holds, without going through the package build.
 */
async function bundleDiagnostics(): Promise<string> {
    const build = await rollup({
        input: join(ROOT, "src/discovery/diagnose.ts"),
        plugins: [
            {
                name: "transpile-typescript",
                resolveId(source, importer) {
                    if (importer === undefined || !source.startsWith(".")) return null;
                    const base = resolve(dirname(importer), source);
                    return [`${base}.ts`, join(base, "index.ts")].find((candidate) => existsSync(candidate)) ?? null;
                },
                transform(code, id) {
                    if (!id.endsWith(".ts")) return null;
                    return ts.transpileModule(code, { fileName: id, compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } }).outputText;
                },
            },
        ],
    });
    const { output } = await build.generate({ format: "es" });
    await build.close();
    return output[0].code;
}

/** What the page's diagnose() resolved to, or the error it threw. */
type InPageResult = { code: string; message: string; status: number | null; retry: boolean } | null | { thrown: string };

/** A hub on another origin than the page (another port of 127.0.0.1: the same site, so cookies are no issue). */
interface OtherOriginHub {
    /** Its URL. */
    readonly url: string;
    /** Its origin. */
    readonly origin: string;
    /** Stop listening (a hub that is down). */
    stop(): Promise<void>;
    /** Stop for good. */
    close(): Promise<void>;
}

/** The folder served at `/dist/`: the diagnostics bundle and the IIFE build. */
let bundleDir: string | undefined;

describeInChromium(
    "diagnose() in Chromium",
    {
        prepare: async () => {
            bundleDir = mkdtempSync(join(tmpdir(), "diagnostics-bundle-"));
            writeFileSync(join(bundleDir, "diagnose.js"), await bundleDiagnostics());
            // The connector as a <script> tag loads it, with the parts it loads on first use beside it (dist/iife/: the
            // diagnostics among them).
            copyFileSync(join(ROOT, "dist/laravel-echo-mercure.iife.js"), join(bundleDir, "laravel-echo-mercure.iife.js"));
            cpSync(join(ROOT, "dist/iife"), join(bundleDir, "iife"), { recursive: true });
        },
        server: (hub) =>
            hub.start({
                distDir: bundleDir!,
                pages: {
                    [CONNECTOR_PAGE]: '<!doctype html><title>connector</title><script src="/dist/laravel-echo-mercure.iife.js"></script>',
                    [PAGE]: '<!doctype html><title>diagnostics</title><script type="module">import * as d from "/dist/diagnose.js"; window.diagnostics = d;</script>',
                },
            }),
        tearDown: () => {
            if (bundleDir !== undefined) rmSync(bundleDir, { recursive: true, force: true });
        },
    },
    ({ hub: target, browser, dev, newPage, track }) => {
        let page: Page | undefined;

        beforeAll(async () => {
            page = await (await browser().newContext()).newPage();
            await page.goto(dev().url + PAGE);
            await page.waitForFunction(() => (window as unknown as { diagnostics?: unknown }).diagnostics !== undefined);
        });

        /**
         * A hub on another origin allowing `corsOrigins`: the dev hub, or the suite's reference hub behind a second
         * dev server's proxy (whose origin is then its resource identifier, as a hub's own URL is).
         */
        async function hub(corsOrigins: string[]): Promise<OtherOriginHub> {
            const jwtKey = "browser-diagnostics-key-of-32-bytes!!";
            if (target.reference === null) {
                const started = await startDevHub({ jwtKey, issuers: ["https://app.test"], corsOrigins });
                return track({ url: started.url, origin: started.origin, stop: () => started.stop(), close: () => started.close() });
            }
            const front = await startDevServer({ jwtKey, externalHub: referenceExternalHub(target.reference, { corsOrigins }) });
            return track({ url: front.hubUrl, origin: front.url, stop: () => front.stop(), close: () => front.close() });
        }

        /** Run diagnose() in the page with the browser's own fetch, as the connector would after a stream failed. */
        function diagnoseInPage(hubUrl: string): Promise<InPageResult> {
            return page!.evaluate(async (url) => {
                type Diagnose = (input: object) => Promise<{ code: string; message: string; status?: number; retry: boolean } | null>;
                const { diagnose } = (window as unknown as { diagnostics: { diagnose: Diagnose } }).diagnostics;
                try {
                    const result = await diagnose({ hub: url, fetch: (input: string, init: RequestInit) => fetch(input, init), failure: { kind: "stream" }, timeout: 10_000 });
                    return result === null ? null : { code: result.code, message: result.message, status: result.status ?? null, retry: result.retry };
                } catch (error) {
                    return { thrown: String(error) };
                }
            }, hubUrl);
        }

        it("names CORS when the hub does not allow the page origin (fetch fails, a no-cors request reaches the hub)", async () => {
            const refusing = await hub([]);
            const result = await diagnoseInPage(refusing.url);
            expect(result).toEqual({
                code: "cors_refused",
                message: `The hub at ${refusing.origin} does not allow credentialed requests from ${dev().url}: add ${dev().url} to the hub's cors_origins, so that it answers with Access-Control-Allow-Origin: ${dev().url} and Access-Control-Allow-Credentials: true.`,
                status: null,
                retry: false,
            });
        });

        it("tells a hub that is down from a CORS refusal", async () => {
            const down = await hub([]);
            await down.stop();
            const result = await diagnoseInPage(down.url);
            expect(result).toMatchObject({ code: "hub_unreachable", retry: true });
            expect((result as { message: string }).message).toContain(`The hub at ${down.url} could not be reached (`);
        });

        it("reads a CORS-allowed 401 whose challenge the browser hides, and still names what to check", async () => {
            const allowing = await hub([dev().url]);
            const result = await diagnoseInPage(allowing.url);
            expect(result).toMatchObject({ code: "invalid_token", status: 401, retry: false });
            expect((result as { message: string }).message).toContain(
                `The hub refused the access token with HTTP 401 (its reason is hidden cross-origin): check that the cookie "mercure_access_token" reaches it, that Laravel's MERCURE_PUBLIC_URL is exactly "${allowing.url}"`,
            );
        });

        it("reads the challenge of a same-origin hub: no cookie reached it", async () => {
            const result = await diagnoseInPage(dev().hubUrl);
            expect(result).toMatchObject({ code: "cookie_missing", status: 401 });
        });

        it("the connector's error() names CORS when the hub does not allow the page origin, and stops with failed", async () => {
            const refusing = await hub([]);
            const connectorPage = await newPage();
            await connectorPage.goto(dev().url + CONNECTOR_PAGE);
            const seen = await connectorPage.evaluate(async (hubUrl) => {
                type Failure = { code: string; message: string };
                type EchoLike = { channel(name: string): { error(callback: (error: Failure) => void): unknown }; connector: { connectionStatus(): string } };
                const { MercureEcho } = (window as unknown as { EchoMercure: { MercureEcho: new (options: object) => EchoLike } }).EchoMercure;
                const echo = new MercureEcho({ host: hubUrl });
                const codes: string[] = [];
                return new Promise<{ codes: string[]; message: string; status: string } | { timedOut: string[] }>((resolve) => {
                    echo.channel("news").error((error) => {
                        codes.push(error.code);
                        if (error.code !== "stream_error") resolve({ codes, message: error.message, status: echo.connector.connectionStatus() });
                    });
                    setTimeout(() => resolve({ timedOut: codes }), 30_000);
                });
            }, refusing.url);
            expect(seen).toEqual({
                codes: ["cors_refused"], // in place of the stream_error held while the probe ran (issue 51)
                message: expect.stringContaining(`add ${dev().url} to the hub's cors_origins`),
                status: "failed",
            });
        });
    },
);

/** What the connector in Chromium must name for each deployment: the error code and a phrase of its message. */
const CAUSES: readonly { kind: DeploymentKind; code: string; says: (deployment: Deployment) => string }[] = [
    { kind: "audience", code: "invalid_token", says: () => `the hub expects the audience "${OTHER_RESOURCE}"` },
    { kind: "key", code: "invalid_token", says: () => "that the hub trusts Laravel's issuer (MERCURE_JWT_ISSUER, else APP_URL) and that both use the same MERCURE_JWT_SECRET" },
    { kind: "issuer", code: "invalid_token", says: () => "that the hub trusts Laravel's issuer (MERCURE_JWT_ISSUER, else APP_URL) and that both use the same MERCURE_JWT_SECRET" },
    // Cross-origin, the hub's challenge is hidden (it exposes only Link); its metadata names the cookie it reads.
    { kind: "cookie_name", code: "invalid_token", says: () => 'check that the cookie "mercure_access_token" reaches it' },
    { kind: "cors", code: "cors_refused", says: (deployment) => `add ${deployment.stack.url} to the hub's cors_origins` },
    { kind: "legacy", code: "hub_outdated", says: () => "upgrade the hub to Mercure 1.0" },
];

describeInChromium(
    "the connector in Chromium names what is wrong with a deployment",
    // Each test starts its own deployment: the suite's server is not used.
    { server: () => startDevServer({ distDir: DIST_DIR }) },
    ({ hub: target, open, track }) => {
        /** Start `kind` on the suite's hub, open the harness page of its app logged in as Ann, and join her orders. */
        async function joinOrders(kind: DeploymentKind): Promise<{ deployment: Deployment; tab: PageHarness }> {
            const deployment = await deploy(kind, target, { [HARNESS_PAGE]: harnessPage() });
            track({ close: () => deployment.close() });
            const tab = await open(1, HARNESS_PAGE, deployment.stack.url);
            await tab.create({ host: deployment.hubUrl });
            await tab.join({ kind: "private", name: "orders.1" });
            return { deployment, tab };
        }

        it("subscribes on a healthy deployment, on one origin or two", async () => {
            for (const kind of ["healthy", "external_healthy"] as const) {
                const { tab } = await joinOrders(kind);
                const seen = await tab.waitForSubscribed(["private-orders.1"], { timeout: 15_000 });
                expect(seen.errors, kind).toEqual([]);
            }
        });

        for (const cause of CAUSES) {
            it(`${cause.kind}: error() names ${cause.code}, and the status ends failed`, async () => {
                const { deployment, tab } = await joinOrders(cause.kind);
                const seen = await tab.waitFor("the error naming the cause", (snapshot) => snapshot.errors.some((error) => error.code !== "stream_error"), { timeout: 15_000 });
                const named = seen.errors.filter((error) => error.code !== "stream_error");
                expect(named.map((error) => [error.channel, error.code])).toEqual([["private-orders.1", cause.code]]);
                expect(named[0]!.message).toContain(cause.says(deployment));
                await tab.waitForStatus("failed");
            });
        }
    },
);
