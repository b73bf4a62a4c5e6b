import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { startDemo } from "../../src/dev/demo/demo";
import { DEMO_ENCRYPTED_CHANNEL, DEMO_WHISPER_CHANNEL } from "../../src/dev/demo/page";
import { DEFAULT_TOPIC_PREFIX } from "../../src/dev/laravel/options";
import { whisperTopic } from "../../src/dev/laravel/topics";
import { describeInChromium } from "./support/suite";
import { waitUntil } from "./support/wait";

/** A plaintext no ciphertext can contain by chance (base64url has no spaces). */
const MARKER = "demo secret that must never reach the hub in clear";

describeInChromium("the demo page in Chromium", { server: (hub) => startDemo(hub.configure({ port: 0 })) }, (suite) => {
    it("says so when another window of the same browser logged in as another user, and how to be two users at once (issue 30)", async () => {
        const [browser, demo] = [suite.browser(), suite.dev()];
        const context = await browser.newContext();
        try {
            const ann = await context.newPage();
            await ann.goto(`${demo.url}/?user=1`);
            await waitUntil("the demo to connect", () => ann.evaluate(() => document.getElementById("status")?.textContent === "connected"));
            expect(await ann.isHidden("#replaced")).toBe(true);
            const ben = await context.newPage();
            await ben.goto(`${demo.url}/?user=2`);
            await waitUntil("Ann's page to say another login replaced her", () => ann.isVisible("#replaced"), { timeout: 10_000 });
            expect(await ann.textContent("#replaced")).toContain("logged in as user 2, which replaced user 1 here");
            expect(await ann.textContent("#replaced")).toContain("private window or another browser");
            expect(await ben.isHidden("#replaced")).toBe(true);
        } finally {
            await context.close();
        }
    });

    it("shows each message of the encrypted channel decrypted, next to the ciphertext envelope the hub carried for it", async () => {
        const [browser, demo] = [suite.browser(), suite.dev()];
        const context = await browser.newContext();
        try {
            const page = await context.newPage();
            const pageErrors: string[] = [];
            page.on("pageerror", (error) => pageErrors.push(error.message));
            await page.goto(`${demo.url}/?user=2`);
            await waitUntil("the demo to connect", () => page.evaluate(() => document.getElementById("status")?.textContent === "connected"));
            // The stream carries the channel once the hub has it: a broadcast before could reach nobody.
            await waitUntil("the stream to carry the encrypted channel", () =>
                demo!.hub.stats.subscribeConnections.some((connection) => connection.query.includes("private-encrypted-chat")),
            );

            const [id] = await demo.broadcast({ channels: [DEMO_ENCRYPTED_CHANNEL], event: "App\\Events\\SecretMessage", payload: { author: "Ann", text: MARKER } });
            await page.fill("#secret-text", "sent from the form");
            await page.click("#secret button");
            const rows = await waitUntil("two encrypted messages", async () => {
                const texts = await page.$$eval("#encrypted li", (items) =>
                    items.map((item) => ({ all: item.textContent ?? "", carried: item.querySelector(".carried")?.textContent ?? "" })),
                );
                return texts.length === 2 ? texts.reverse() : null; // newest first on the page
            });

            expect(rows[0]!.all).toContain(`Ann: ${MARKER}`);
            expect(rows[0]!.carried).toContain(`hub carried ${id}:`);
            const envelope = JSON.parse(rows[0]!.carried.slice(rows[0]!.carried.indexOf("{"))) as { channels: string[]; data: string };
            expect(Object.keys(envelope)).toEqual(["channels", "data"]);
            expect(envelope.channels).toEqual([DEMO_ENCRYPTED_CHANNEL]);
            expect(envelope.data.split(".")).toHaveLength(5);
            expect(rows[0]!.carried).not.toContain(MARKER);
            expect(rows[1]!.all).toContain("user 2: sent from the form");
            expect(rows[1]!.carried).not.toContain("sent from the form");
            expect(rows[1]!.carried).not.toBe(rows[0]!.carried);
            expect(pageErrors).toEqual([]);
        } finally {
            await context.close();
        }
    });

    it("shows the other user typing in the private chat (whispers), and nothing on the typist's own page", async () => {
        const [browser, demo] = [suite.browser(), suite.dev()];
        const contexts = [await browser.newContext(), await browser.newContext()];
        try {
            const [ann, ben] = await Promise.all(contexts.map((context) => context.newPage())) as [Page, Page];
            const pageErrors: string[] = [];
            for (const page of [ann, ben]) page.on("pageerror", (error) => pageErrors.push(error.message));
            const streamsBefore = demo.hub.stats.subscribeConnections.length;
            await ann.goto(`${demo.url}/?user=1`);
            await ben.goto(`${demo.url}/?user=2`);
            // Both whisper streams of the chat are open at the hub: a whisper after this reaches the other page.
            const topic = whisperTopic(DEFAULT_TOPIC_PREFIX, DEMO_WHISPER_CHANNEL);
            await waitUntil("both whisper streams of the chat", () =>
                demo!.hub.stats.subscribeConnections.slice(streamsBefore).filter((record) => record.status === 200 && new URLSearchParams(record.query).get("match") === topic).length === 2,
            );

            // Every text the indicator shows, recorded as it changes (it clears itself 3 s after the last whisper).
            const shown = (page: Page) => page.evaluate(() => (window as unknown as { shown: string[] }).shown);
            for (const page of [ann, ben]) {
                await page.evaluate(() => {
                    const shown: string[] = [];
                    (window as unknown as { shown: string[] }).shown = shown;
                    const indicator = document.getElementById("typing")!;
                    // One record per change, even when several land in one task: the text it put there ("" when cleared).
                    new MutationObserver((records) => {
                        for (const record of records) shown.push(record.addedNodes[0]?.textContent ?? "");
                    }).observe(indicator, { childList: true });
                });
            }
            await ann.fill("#chat-text", "Hello Ben");
            await ann.fill("#chat-text", "");
            await waitUntil("Ben to see Ann typing, then stop", async () => (await shown(ben)).join("|") === "Ann is typing…|");
            // Ben's whisper reaches Ann after her own two on the same stream, which the connector dropped on her page.
            await ben.fill("#chat-text", "Hi");
            await waitUntil("Ann to see Ben typing", async () => (await shown(ann)).length > 0);
            expect(await shown(ann)).toEqual(["Ben is typing…"]);
            expect(await ann.$$eval("#log li.error", (items) => items.length)).toBe(0);
            expect(pageErrors).toEqual([]);
        } finally {
            await Promise.all(contexts.map((context) => context.close()));
        }
    });
});
