import { describe, expect, it } from "vitest";
import { HTTP1_STREAMS, HTTP1_WHISPER_STREAMS, streamBudget } from "../../../src/transport/connection-budget";

/** A browser-like environment whose completed requests report these protocols. */
const browser = (entries: Array<{ name: string; nextHopProtocol?: string }> = []) => ({
    location: { href: "https://app.test/" },
    performance: { getEntriesByType: () => entries },
});

describe("streamBudget", () => {
    it("keeps one of a browser's six HTTP/1.1 connections free: five streams, four of them whisper streams", () => {
        expect([HTTP1_STREAMS, HTTP1_WHISPER_STREAMS]).toEqual([5, 4]);
    });

    it("counts connections to a plain-http hub in a browser: browsers speak HTTP/2 only over TLS", () => {
        expect(streamBudget(new URL("http://127.0.0.1:8000/.well-known/mercure"), browser())).toBe(5);
    });

    it("counts connections to an https hub that a completed request to its origin reports as HTTP/1.1", () => {
        const hub = new URL("https://app.test/.well-known/mercure");
        expect(streamBudget(hub, browser([{ name: "https://app.test/broadcasting/auth", nextHopProtocol: "http/1.1" }]))).toBe(5);
        expect(streamBudget(hub, browser([{ name: "https://app.test/broadcasting/auth", nextHopProtocol: "h2" }]))).toBe(Infinity);
        // Another origin's protocol says nothing about the hub's; a hidden one (cross-origin timing) neither.
        expect(streamBudget(hub, browser([{ name: "https://cdn.test/app.js", nextHopProtocol: "http/1.1" }]))).toBe(Infinity);
        expect(streamBudget(hub, browser([{ name: "https://app.test.evil/x", nextHopProtocol: "http/1.1" }]))).toBe(Infinity);
        expect(streamBudget(hub, browser([{ name: "https://app.test/x", nextHopProtocol: "" }]))).toBe(Infinity);
    });

    it("counts nothing outside a browser, or where performance cannot be read", () => {
        expect(streamBudget(new URL("http://127.0.0.1:8000/.well-known/mercure"), {})).toBe(Infinity);
        const broken = { location: {}, performance: { getEntriesByType: () => { throw new Error("no"); } } };
        expect(streamBudget(new URL("https://app.test/.well-known/mercure"), broken)).toBe(Infinity);
    });
});
