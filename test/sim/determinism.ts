import { createCipheriv, createDecipheriv, createHash } from "node:crypto";
import { appendFileSync } from "node:fs";
import { vi } from "vitest";

/*
 * What makes one seed give one run: every source of randomness the code reads (`Math.random` for backoff jitter,
 * `crypto.randomUUID` for socket, tab and stream ids) draws from the run's seeded generator, and WebCrypto's AES-GCM
 * (the encrypted channels' keys and decryption), which Node.js runs on its thread pool and settles in real time, is
 * computed synchronously here and settles after a fake-timer task instead, as a browser's settles in a later task.
 */

/** A seeded generator of numbers in [0, 1) (mulberry32): small, fast, and the same sequence on every machine. */
export function seededRandom(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

/** A UUID v4 drawn from `random`. */
function uuid(random: () => number): `${string}-${string}-${string}-${string}-${string}` {
    const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16));
    hex[12] = "4";
    hex[16] = (8 + Math.floor(random() * 4)).toString(16);
    const text = hex.join("");
    return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
}

/** The generator the current run draws from (see {@link useSeededRandomness}). */
let current: () => number = seededRandom(1);

/** Make `Math.random` and `crypto.randomUUID` draw from `random` until the next call; installs the spies once. */
export function useSeededRandomness(random: () => number): void {
    current = random;
    if (!vi.isMockFunction(Math.random)) vi.spyOn(Math, "random").mockImplementation(() => current());
    if (!vi.isMockFunction(globalThis.crypto.randomUUID)) vi.spyOn(globalThis.crypto, "randomUUID").mockImplementation(() => uuid(current));
}

/** The raw bytes of each CryptoKey the shim handed out, to compute AES-GCM with. */
const rawKeys = new WeakMap<CryptoKey, Buffer>();

/** The CryptoKeys imported ahead of the runs, by hex of the key bytes and the usages. */
const imported = new Map<string, CryptoKey>();

/** The channel key of an encrypted channel (laravel-mercure §6.1 derives it with HKDF; any fixed 32 bytes do here). */
export function channelKey(name: string): Buffer {
    return createHash("sha256").update("simulation key " + name).digest();
}

/**
 * Import, with the real WebCrypto, each key of `names`' channels for each usage set the code imports with (before fake
 * timers: this settles in real time), and put the shim over `crypto.subtle.importKey`, `encrypt` and `decrypt`: a key
 * imported ahead is handed out after a task, and AES-GCM is computed with `node:crypto`, its result after a task too. The
 * shim throws on anything else: the simulation must not depend on real time.
 */
export async function shimWebCrypto(names: readonly string[]): Promise<void> {
    const subtle = globalThis.crypto.subtle;
    const real = { importKey: subtle.importKey.bind(subtle) };
    for (const name of names) {
        const bytes = channelKey(name);
        for (const usages of [["encrypt", "decrypt"], ["decrypt"]] as KeyUsage[][]) {
            const key = await real.importKey("raw", new Uint8Array(bytes), { name: "AES-GCM" }, false, usages);
            rawKeys.set(key, bytes);
            imported.set(bytes.toString("hex") + " " + usages.join(","), key);
        }
    }
    const later = <T>(compute: () => T): Promise<T> =>
        new Promise((resolve, reject) =>
            setTimeout(() => {
                try {
                    resolve(compute());
                } catch (error) {
                    reject(error);
                }
            }, 0),
        );
    const gcm = (algorithm: unknown, key: CryptoKey): { iv: Buffer; aad: Buffer; raw: Buffer } => {
        const { name, iv, additionalData } = algorithm as { name: string; iv: BufferSource; additionalData?: BufferSource };
        const raw = rawKeys.get(key);
        if (name !== "AES-GCM" || raw === undefined) throw new Error(`the simulation's WebCrypto shim computes AES-GCM with its own keys only (got ${name})`);
        return { iv: bytesOf(iv), aad: bytesOf(additionalData ?? new Uint8Array()), raw };
    };
    Object.assign(subtle, {
        importKey: (format: string, data: BufferSource, algorithm: unknown, _extractable: boolean, usages: KeyUsage[]) => {
            const key = format === "raw" ? imported.get(bytesOf(data).toString("hex") + " " + usages.join(",")) : undefined;
            if (key === undefined || (algorithm as { name?: string }).name !== "AES-GCM") return Promise.reject(new Error(`the simulation's WebCrypto shim imports its channels' raw AES-GCM keys only`));
            return later(() => key);
        },
        encrypt: (algorithm: unknown, key: CryptoKey, data: BufferSource) =>
            later(() => {
                const { iv, aad, raw } = gcm(algorithm, key);
                const cipher = createCipheriv("aes-256-gcm", raw, iv).setAAD(aad);
                const sealed = Buffer.concat([cipher.update(bytesOf(data)), cipher.final(), cipher.getAuthTag()]);
                return sealed.buffer.slice(sealed.byteOffset, sealed.byteOffset + sealed.length);
            }),
        decrypt: (algorithm: unknown, key: CryptoKey, data: BufferSource) =>
            later(() => {
                const { iv, aad, raw } = gcm(algorithm, key);
                const bytes = bytesOf(data);
                const decipher = createDecipheriv("aes-256-gcm", raw, iv).setAAD(aad);
                decipher.setAuthTag(bytes.subarray(bytes.length - 16));
                let plain: Buffer;
                try {
                    plain = Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]);
                } catch {
                    throw new DOMException("The operation failed for an operation-specific reason", "OperationError");
                }
                return plain.buffer.slice(plain.byteOffset, plain.byteOffset + plain.length);
            }),
    });
}

/** The bytes of a `BufferSource`. */
function bytesOf(source: BufferSource): Buffer {
    if (source instanceof ArrayBuffer) return Buffer.from(source);
    return Buffer.from(source.buffer, source.byteOffset, source.byteLength);
}

/** Seal `plaintext` as Laravel does for an encrypted channel (laravel-mercure §6.3): compact JWE, dir / A256GCM, with `iv`. */
export function sealForChannel(name: string, plaintext: object, iv: Buffer): string {
    const header = "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0";
    const cipher = createCipheriv("aes-256-gcm", channelKey(name), iv).setAAD(Buffer.from(header, "ascii"));
    const sealed = Buffer.concat([cipher.update(JSON.stringify(plaintext), "utf8"), cipher.final()]);
    return `${header}..${iv.toString("base64url")}.${sealed.toString("base64url")}.${cipher.getAuthTag().toString("base64url")}`;
}

/** Open a JWE sealed with a channel key (a whisper on an encrypted channel, as another tab would read it). */
export function openForChannel(name: string, jwe: string): unknown {
    const [header, , iv, ciphertext, tag] = jwe.split(".");
    const decipher = createDecipheriv("aes-256-gcm", channelKey(name), Buffer.from(iv!, "base64url")).setAAD(Buffer.from(header!, "ascii"));
    decipher.setAuthTag(Buffer.from(tag!, "base64url"));
    return JSON.parse(Buffer.concat([decipher.update(Buffer.from(ciphertext!, "base64url")), decipher.final()]).toString("utf8"));
}

/** Append a line to the trace file `SIM_TRACE` names (`SIM_TRACE=/tmp/trace.txt npm run fuzz -- --seed … --path …`). */
export function log(line: string): void {
    const file = process.env["SIM_TRACE"];
    if (file) appendFileSync(file, line + "\n");
}
