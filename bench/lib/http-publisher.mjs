// Publishing to a hub that runs in another process (the reference hub) as Laravel's mercure driver does: a form
// POST per update with a publisher token in the Authorization header. Single updates go one at a time, in order
// (the continuity run checks the order); a burst goes over several connections at once, in any order.
import { createHmac } from "node:crypto";

/** The Mercure authorization detail type (mercure-hub §2.2). */
const DETAIL_TYPE = "https://mercure.rocks/authorization-detail";

/** How many POSTs of a burst are in flight at once (the Go hub publishes about twice as fast with 8 as with 1). */
const BURST_CONCURRENCY = 16;

/** base64url of a JSON value. */
const b64 = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");

/**
 * An HS256 publisher token (`typ` `at+jwt`) granting `publish` on every topic, as Laravel's driver mints it
 * (laravel-mercure §4.3), valid for `ttlSeconds`.
 */
export function publisherToken({ jwtKey, issuer, audience, ttlSeconds }) {
    const iat = Math.floor(Date.now() / 1000);
    const claims = { iss: issuer, aud: audience, client_id: issuer, iat, exp: iat + ttlSeconds, authorization_details: [{ type: DETAIL_TYPE, actions: ["publish"], topics: [{ match: "*" }] }] };
    const signed = `${b64({ alg: "HS256", typ: "at+jwt" })}.${b64(claims)}`;
    return `${signed}.${createHmac("sha256", jwtKey).update(signed).digest("base64url")}`;
}

/**
 * A publisher to the hub at `url` with `token`. `send(update)` resolves with the event id once the hub took it,
 * after every earlier `send`; `burst(updates)` resolves once the hub took them all. A refused or failed POST
 * rejects with the hub's status and answer.
 */
export function httpPublisher(url, token) {
    const post = async ({ topics, data, private: isPrivate }) => {
        const form = new URLSearchParams();
        for (const topic of topics) form.append("topic", topic);
        form.append("data", data);
        if (isPrivate) form.append("private", "on");
        const response = await fetch(url, {
            method: "POST",
            headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/x-www-form-urlencoded" },
            body: form.toString(),
            signal: AbortSignal.timeout(10_000),
        });
        const text = await response.text();
        if (response.status !== 200) throw new Error(`the hub at ${url} answered ${response.status} to a publish: ${text.trim().slice(0, 200)}`);
        return text;
    };
    let queue = Promise.resolve();
    return {
        send(update) {
            const sent = queue.then(() => post(update));
            queue = sent.catch(() => undefined);
            return sent;
        },
        async burst(updates) {
            let next = 0;
            const worker = async () => {
                while (next < updates.length) await post(updates[next++]);
            };
            await Promise.all(Array.from({ length: Math.min(BURST_CONCURRENCY, updates.length) }, worker));
        },
    };
}
