import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { fromDiagnosis } from "../../../src/dev/doctor/checks";
import { findHub } from "../../../src/dev/doctor/find-hub";
import { doctorCommand, formatReport, parseDoctorArgs, runDoctor } from "../../../src/dev/doctor";
import { startDevHub, type DevHub } from "../../../src/dev/hub";
import { signJwt } from "../../../src/dev/jwt/jwt";
import type { FetchLike } from "../../../src/transport/platform";

const fetch: FetchLike = (url, init) => globalThis.fetch(url, init);
const servers: Server[] = [];
const hubs: DevHub[] = [];

afterEach(async () => {
    await Promise.all(hubs.splice(0).map((hub) => hub.close()));
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** An app server answering every request with `answer`; resolves with its origin. */
/** What the fake app answers. */
interface AppAnswer {
    status?: number;
    headers?: Record<string, string>;
    body?: string;
}

async function app(answer: (path: string) => AppAnswer): Promise<string> {
    const server = createServer((req, res) => {
        const { status = 200, headers = {}, body = "" } = answer(req.url ?? "/");
        res.writeHead(status, headers);
        res.end(body);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function hub(options: Partial<Parameters<typeof startDevHub>[0]> = {}): Promise<DevHub> {
    const started = await startDevHub({ jwtKey: "doctor-test-key-of-at-least-32-bytes!", issuers: ["https://app.test"], ...options });
    hubs.push(started);
    return started;
}

describe("parseDoctorArgs()", () => {
    it("reads the app URL and every option, in either flag form", () => {
        expect(parseDoctorArgs(["https://example.com", "--cookie", "mercure_access_token=a=b", "--token=t", "--origin", "https://app.example.com/", "--timeout=500"])).toEqual({
            help: false,
            options: { appUrl: "https://example.com/", cookie: { name: "mercure_access_token", value: "a=b" }, token: "t", origin: "https://app.example.com", timeout: 500 },
        });
        expect(parseDoctorArgs(["-h"])).toEqual({ help: true });
    });

    it.each([
        [[], "Missing <app-url>"],
        [["ftp://example.com"], "is not an http(s) URL"],
        [["https://a.test", "https://b.test"], 'Unexpected argument "https://b.test"'],
        [["https://a.test", "--bogus"], 'Unknown option "--bogus"'],
        [["https://a.test", "--cookie"], "--cookie needs a value"],
        [["https://a.test", "--cookie", "=x"], "must be <name>=<value>"],
        [["https://a.test", "--origin", "https://a.test/path"], "is not an origin"],
        [["https://a.test", "--timeout", "0"], "is not a positive whole number"],
    ])("refuses %j", (argv, message) => {
        expect(() => parseDoctorArgs(argv)).toThrow(message);
    });
});

describe("findHub()", () => {
    it("reads the Link header of the app page, resolving it against the final URL", async () => {
        const origin = await app((path): AppAnswer => (path === "/" ? { status: 302, headers: { Location: "/home/" } } : { headers: { Link: '<../hub>; rel="Mercure"' } }));
        const found = await findHub(origin + "/", fetch, 5_000);
        expect(found.hub?.href).toBe(origin + "/hub");
        expect(found.result).toEqual({ name: "hub found", verdict: "pass", detail: `${origin}/hub (Link header of ${origin}/)` });
    });

    it("falls back to the metadata of the app origin's default hub path", async () => {
        const devHub = await hub();
        const found = await findHub(devHub.origin + "/", fetch, 5_000);
        expect(found.result.detail).toBe(`${devHub.url} (protected-resource metadata of ${devHub.origin})`);
    });

    it("falls back to a hub answering at /.well-known/mercure", async () => {
        const devHub = await hub({ legacyProtocol: true });
        expect((await findHub(devHub.origin + "/", fetch, 5_000)).result.detail).toBe(`${devHub.url} (/.well-known/mercure on the app's origin)`);
    });

    it("fails, saying what to add, when nothing announces a hub (an app's catch-all page is no hub)", async () => {
        const origin = await app(() => ({ headers: { "Content-Type": "text/html" }, body: "<!doctype html><p>Welcome</p>" }));
        expect(await findHub(origin + "/", fetch, 5_000)).toEqual({
            hub: null,
            result: {
                name: "hub found",
                verdict: "fail",
                detail: `${origin}/ announces no hub, and none answers at ${origin}/.well-known/mercure`,
                fix: 'add a Link: <hub URL>; rel="mercure" header or a <link rel="mercure" href="…"> to the page, or serve the hub at /.well-known/mercure',
            },
        });
    });

    it("fails when the app cannot be fetched", async () => {
        const origin = await app(() => ({}));
        await new Promise((resolve) => servers.pop()!.close(resolve));
        const found = await findHub(origin + "/", fetch, 5_000);
        expect(found.result).toMatchObject({ verdict: "fail", fix: "check the URL and that the app is running" });
        expect(found.result.detail).toContain(`${origin}/ could not be fetched (fetch failed`);
    });
});

describe("runDoctor()", () => {
    it("skips every later check when no hub was found, and fails", async () => {
        const origin = await app(() => ({ status: 404 }));
        const report = await runDoctor({ appUrl: origin + "/" });
        expect(report.ok).toBe(false);
        expect(report.checks.map((check) => check.verdict)).toEqual(["fail", "skip", "skip", "skip", "skip", "skip", "skip", "skip", "skip", "skip"]);
    });

    it("checks a bearer token and names its expiry", async () => {
        const devHub = await hub({ anonymous: true });
        const claims = Buffer.from(JSON.stringify({ iss: "https://app.test", aud: devHub.url, exp: 1_000 })).toString("base64url");
        const header = Buffer.from(JSON.stringify({ alg: "HS256", typ: "at+jwt" })).toString("base64url");
        const report = await runDoctor({ appUrl: devHub.origin + "/", token: `${header}.${claims}.c2ln` });
        const credentials = report.checks.find((check) => check.name === "credentials accepted");
        expect(credentials).toMatchObject({ verdict: "fail", detail: "The hub rejected the access token (HTTP 401 invalid_token) because it expired at 1970-01-01T00:16:40.000Z" });
        expect(report.checks.find((check) => check.name === "anonymous access")?.detail).toContain("accepted");
    });
});

describe("runDoctor(): where --cookie and --token go", () => {
    /** `fetch`, recording the URL of every request that carried a credential (Authorization or the given cookie). */
    function recording(inner: FetchLike): { fetch: FetchLike; credentialed: string[] } {
        const credentialed: string[] = [];
        return {
            credentialed,
            fetch: (url, init) => {
                const headers = new Headers(init.headers as HeadersInit);
                if (headers.has("Authorization") || (headers.get("Cookie") ?? "").includes("secret-value")) credentialed.push(url);
                return inner(url, init);
            },
        };
    }

    it("does not send them to a hub that an app's Link header names on another origin without metadata naming it; says why", async () => {
        const elsewhere = await app(() => ({ status: 401 }));
        const origin = await app((path) => (path === "/" ? { headers: { Link: `<${elsewhere}/.well-known/mercure>; rel=mercure` } } : { status: 404 }));
        for (const flags of [{ token: "secret-token" }, { cookie: { name: "mercure_access_token", value: "secret-value" } }]) {
            const spy = recording(fetch);
            const report = await runDoctor({ appUrl: origin + "/", fetch: spy.fetch, ...flags });
            expect(spy.credentialed).toEqual([]);
            expect(report.checks.find((check) => check.name === "credentials accepted")).toMatchObject({
                verdict: "skip",
                detail: expect.stringMatching(/^--(token|cookie) not sent: the hub http:\/\/127\.0\.0\.1:\d+\/\.well-known\/mercure is on another origin than the app/),
            });
        }
    });

    it("sends them to a hub on another origin whose own metadata names it as its resource", async () => {
        const devHub = await hub({ anonymous: true });
        const origin = await app((path) => (path === "/" ? { headers: { Link: `<${devHub.url}>; rel=mercure` } } : { status: 404 }));
        const spy = recording(fetch);
        await runDoctor({ appUrl: origin + "/", fetch: spy.fetch, token: "secret-token" });
        expect(spy.credentialed.map((url) => new URL(url).origin)).toEqual([devHub.origin]);
    });

    it("never sends them over plain HTTP when the app is HTTPS", async () => {
        const requests: Array<{ url: string; headers: Headers }> = [];
        const scripted: FetchLike = async (url, init) => {
            requests.push({ url, headers: new Headers(init.headers as HeadersInit) });
            const headers: Record<string, string> = url === "https://app.test/" ? { Link: "<http://app.test/.well-known/mercure>; rel=mercure" } : {};
            return new Response(url.includes("oauth-protected-resource") ? JSON.stringify({ resource: "http://app.test/.well-known/mercure" }) : "", { status: url === "https://app.test/" || url.includes("oauth") ? 200 : 401, headers });
        };
        const report = await runDoctor({ appUrl: "https://app.test/", fetch: scripted, token: "secret-token" });
        expect(requests.filter((request) => request.headers.has("Authorization"))).toEqual([]);
        expect(report.checks.find((check) => check.name === "credentials accepted")?.detail).toBe(
            "--token not sent: the hub http://app.test/.well-known/mercure is plain HTTP while the app is HTTPS, and they would travel in the clear",
        );
    });
});

describe("the report", () => {
    it("prints one verdict per line, the fix under failures and warnings, and a summary", () => {
        const text = formatReport({
            appUrl: "https://example.com/",
            origin: "https://example.com",
            hub: "https://example.com/.well-known/mercure",
            ok: false,
            checks: [
                { name: "hub found", verdict: "pass", detail: "somewhere", fix: "never shown" },
                { name: "metadata valid", verdict: "fail", detail: "broken", fix: "repair it" },
                { name: "anonymous access", verdict: "skip", detail: "n/a" },
            ],
        });
        expect(text).toBe(
            [
                "laravel-echo-mercure doctor: https://example.com/ (pages on https://example.com)",
                "  pass  hub found                   somewhere",
                "  FAIL  metadata valid              broken",
                "        fix: repair it",
                "  skip  anonymous access            n/a",
                "1 of 3 checks failed.",
                "",
            ].join("\n"),
        );
    });

    it("splits a diagnosis into what was seen and the fix", () => {
        expect(fromDiagnosis("x", { code: "cookie_missing", message: "No access token reached the hub (HTTP 401): use one name: a or b.", status: 401, retry: false })).toEqual({
            name: "x",
            verdict: "fail",
            detail: "No access token reached the hub (HTTP 401)",
            fix: "use one name: a or b",
        });
    });

    it("does not split a diagnosis at a colon inside parentheses (a quoted cause)", () => {
        const message = "The hub at http://127.0.0.1:3000/.well-known/mercure could not be reached (fetch failed: ECONNREFUSED): check that it is running.";
        expect(fromDiagnosis("x", { code: "hub_unreachable", message, status: undefined, retry: true })).toEqual({
            name: "x",
            verdict: "fail",
            detail: "The hub at http://127.0.0.1:3000/.well-known/mercure could not be reached (fetch failed: ECONNREFUSED)",
            fix: "check that it is running",
        });
    });
});

describe("doctorCommand()", () => {
    it("exits with 0 when no check failed, 1 when one did, 2 on a usage error", async () => {
        const out: string[] = [];
        const io = { stdout: { write: (text: string) => out.push(text) }, stderr: { write: (text: string) => out.push(text) } };
        const devHub = await hub({ anonymous: true, publishOrigins: ["*"] });
        expect(await doctorCommand([devHub.origin + "/"], io)).toBe(0);
        expect(out.join("")).toContain("No check failed (10 checks).");
        expect(await doctorCommand([devHub.origin + "/", "--origin", "http://other.test"], io)).toBe(1);
        expect(out.join("")).toContain("FAIL  CORS for the app origin");
        expect(await doctorCommand(["--nope"], io)).toBe(2);
    });
});

describe("the history across pages check (issue 52)", () => {
    /** Publish one update on `hub` with its own JWT key; resolves with its id. */
    async function publishOne(devHub: DevHub): Promise<string> {
        const now = Math.floor(Date.now() / 1000);
        const details = [{ type: "https://mercure.rocks/authorization-detail", actions: ["publish"], topics: [{ match: "*" }] }];
        const token = signJwt({ iss: "https://app.test", aud: devHub.url, sub: "app", iat: now, exp: now + 60, authorization_details: details }, "doctor-test-key-of-at-least-32-bytes!", "HS256");
        const response = await globalThis.fetch(devHub.url, {
            method: "POST",
            headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/x-www-form-urlencoded" },
            body: "topic=news&data=x",
        });
        expect(response.status).toBe(200);
        return response.text();
    }

    /** The history line of a doctor run on an app page that renders `link` in its head. */
    async function historyLine(link: (hubUrl: string) => string, devHub: DevHub): Promise<{ verdict: string; detail: string }> {
        const origin = await app(() => ({ headers: { "Content-Type": "text/html" }, body: `<!doctype html><head>${link(devHub.url)}</head><body></body>` }));
        const report = await runDoctor({ appUrl: origin + "/", timeout: 2_000 });
        const line = report.checks.find((check) => check.name === "history across pages")!;
        return { verdict: line.verdict, detail: line.detail };
    }

    it("passes when the hub replays from the page's rendered cursor", async () => {
        const devHub = await hub({ anonymous: true });
        const id = await publishOne(devHub);
        const line = await historyLine((url) => `<link rel="mercure" href="${url}" last-event-id="${id}">`, devHub);
        expect(line).toEqual({ verdict: "pass", detail: `the hub replays from the page's cursor (${id}): what is broadcast before the page joins still arrives` });
    });

    it("warns once that nothing can be replayed on a hub without history (it answers earliest)", async () => {
        const devHub = await hub({ anonymous: true, history: false });
        const id = await publishOne(devHub);
        const line = await historyLine((url) => `<link rel="mercure" href="${url}" last-event-id="${id}">`, devHub);
        expect(line.verdict).toBe("warn");
        expect(line.detail).toContain(`the hub answered Mercure-Last-Event-ID: earliest to the page's cursor ${id}: it keeps no history`);
    });

    it("warns that a page without a rendered cursor loses what is broadcast before it joins; skips on earliest", async () => {
        const devHub = await hub({ anonymous: true });
        expect((await historyLine((url) => `<link rel="mercure" href="${url}">`, devHub)).verdict).toBe("warn");
        expect(await historyLine((url) => `<link rel="mercure" href="${url}" last-event-id="earliest">`, devHub)).toEqual({
            verdict: "skip",
            detail: "the page's cursor is earliest (nothing was published yet): whether the hub keeps history shows once something was",
        });
    });

    it("skips, saying why, when the hub refuses the anonymous subscription", async () => {
        const devHub = await hub({ anonymous: false });
        const line = await historyLine((url) => `<link rel="mercure" href="${url}" last-event-id="urn:uuid:x">`, devHub);
        expect(line).toEqual({ verdict: "skip", detail: "a subscription from the page's cursor got HTTP 401 (pass --cookie or --token for a hub without anonymous access)" });
    });
});
