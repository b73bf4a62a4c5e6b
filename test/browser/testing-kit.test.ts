import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Window } from "happy-dom";
import { expect, it } from "vitest";
import { startTestStack, type TestStack } from "../../src/testing/e2e";
import { createTestEcho } from "../../src/testing/index";
import { EXPECTED_TEXT, shipmentsComponentTest, type Stage } from "../kit/parity/shipments-test";
import { ALL_HUBS } from "../support/hubs";
import { describeInChromium } from "./support/suite";
import { waitUntil } from "./support/wait";

// issue 34: the same component test (test/kit/parity/) against the unit-test kit in memory and against the dev stack
// (startTestStack(), laravel-echo-mercure/testing/e2e) in Chromium, on the dev hub and on the reference Go hub: all
// must end with the same text.

const COMPONENT = readFileSync(fileURLToPath(new URL("../kit/parity/shipments-component.js", import.meta.url)), "utf8");
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><script src="/dist/laravel-echo-mercure.iife.js"></script><script>${COMPONENT}</script></head><body><div id="app"></div></body></html>`;

type Mount = (echo: unknown, element: Element, userId: number) => void;
const mountShipments = new Function(`${COMPONENT}; return mountShipments;`)() as Mount;

/** What the component shows: its lines joined. */
const linesOf = (element: Element) => [...element.querySelectorAll("p, li")].map((line) => line.textContent).join(" | ");

/** The kit's stage: the component in a happy-dom document, the connector's network in memory. */
function kitStage(): Stage & { close(): void } {
    const window = new Window();
    const element = window.document.createElement("div") as unknown as Element;
    const { echo, hub } = createTestEcho({ user: { id: 1, name: "Ada" } });
    return {
        mount: async () => mountShipments(echo, element, 1),
        socketId: async () => echo.socketId() ?? "",
        broadcast: async (channel, event, payload, socket) => void hub.broadcast(channel, event, payload, { socket: socket ?? null }),
        shows: async (text) => {
            await hub.flush();
            if (!linesOf(element).includes(text)) throw new Error(`The component does not show "${text}": ${linesOf(element)}`);
        },
        text: async () => linesOf(element),
        close: () => {
            echo.disconnect();
            void window.happyDOM.close();
        },
    };
}

it("passes with the kit in memory", async () => {
    const stage = kitStage();
    try {
        expect(await shipmentsComponentTest(stage)).toBe(EXPECTED_TEXT);
    } finally {
        stage.close();
    }
});

let stack: TestStack | undefined;

describeInChromium(
    "the same component test against the dev stack",
    {
        // Once on the dev hub, once on the reference Go hub behind the Laravel stand-in.
        hubs: ALL_HUBS,
        server: async (hub) => {
            stack = await startTestStack({ server: hub.configure({ pages: { "/kit.html": PAGE } }) });
            return stack.server;
        },
    },
    (suite) => {
        it("ends with the text it ends with against the kit", async () => {
            const harness = suite.track(await suite.open(null, "/kit.html"));
            const page = harness.page;
            await stack!.login(page, 1);
            const stage: Stage = {
                mount: () =>
                    page.evaluate(() => {
                        const global = window as unknown as { EchoMercure: { MercureEcho: new (options: object) => unknown }; echo: unknown; mountShipments: Mount };
                        global.echo = new global.EchoMercure.MercureEcho({ shareAcrossTabs: false });
                        global.mountShipments(global.echo, document.getElementById("app")!, 1);
                    }),
                socketId: () => page.evaluate(() => (window as unknown as { echo: { socketId(): string } }).echo.socketId()),
                broadcast: async (channel, event, payload, socket) => void (await stack!.broadcast(channel, event, payload, { socket: socket ?? null })),
                shows: async (text) => void (await waitUntil(`the component shows "${text}"`, async () => (await stage.text()).includes(text))),
                text: () => page.evaluate(() => [...document.querySelectorAll("#app p, #app li")].map((line) => line.textContent).join(" | ")),
            };
            expect(await shipmentsComponentTest(stage)).toBe(EXPECTED_TEXT);
            await page.evaluate(() => (window as unknown as { echo: { disconnect(): void } }).echo.disconnect());
        });
    },
);
