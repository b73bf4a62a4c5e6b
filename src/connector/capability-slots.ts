import { channelKind } from "../topic/channel-kind";
import { hasWebCrypto, loadCrypto } from "../crypto/load";
import { lazyChunk } from "../lazy-chunk";
import type { MercurePrivateChannel, WhisperLink } from "../channel/mercure-private-channel";
import { loadFailed } from "../error-messages";
import type { MercureError } from "../errors";
import type { Capabilities, CapabilitySlot } from "./capabilities";
import type { CryptoCapability } from "./crypto-capability";
import type { ResumeCapability } from "./resume-capability";
import type { WhisperCapability } from "./whisper-capability";

/*
 * The capabilities a connector loads on first use (issue 32: the first render holds public and private channels only),
 * each a chunk of its own that the bundler splits off: a page that never joins a presence channel never downloads
 * presence, and so on.
 */

/** Presence (laravel-mercure §5): loaded when a `presence-` channel is joined. */
export const PRESENCE: CapabilitySlot = {
    needs: (name) => channelKind(name) === "presence",
    part: "presence",
    chunk: /* @__PURE__ */ lazyChunk(() => import("./presence-capability")),
};

/**
 * Encrypted channels (laravel-mercure §6): loaded when a `private-encrypted-` channel is joined. Where WebCrypto exists,
 * the JWE code (its own chunk, with jose) is asked for beside it (issue 53): the first event needs both, and asking for
 * it only once the capability had run put one download after the other on its path. A failed prefetch is forgotten by
 * the loader: the first key or JWE downloads it again and reports a failure then.
 */
export const CRYPTO: CapabilitySlot<CryptoCapability> = {
    needs: (name) => channelKind(name) === "encrypted",
    part: "encrypted channel",
    chunk: /* @__PURE__ */ lazyChunk(() => import("./crypto-capability")),
    alongside: () => void (hasWebCrypto() && loadCrypto().catch(() => undefined)),
};

/**
 * Whispers (laravel-mercure §7): loaded on the first `whisper()` or whisper listener. The helpers it shares with other
 * chunks (split off by the bundler: the response reader, the bounded wait) are asked for beside it (issue 53), not once
 * the whisper chunk has arrived and names them; a failed one fails the whisper chunk's own import, which reports it.
 */
export const WHISPERS: CapabilitySlot<WhisperCapability> = {
    needs: () => false,
    part: "whisper",
    chunk: /* @__PURE__ */ lazyChunk(() => import("./whisper-capability")),
    alongside: () => {
        import("../discovery/response").catch(() => undefined);
        import("../bounded-wait").catch(() => undefined);
    },
};

/**
 * Resuming across the pages of one tab (issue 52 part 2): started when a connector is created with `resumeAcrossPages`
 * (no channel needs it, so none is named in a `load_failed` or left: `part` stays empty). A failed download resumes
 * nothing: the page starts from now, as without the option.
 */
export const RESUME: CapabilitySlot<ResumeCapability> = {
    needs: () => false,
    part: "",
    chunk: /* @__PURE__ */ lazyChunk(() => import("./resume-capability")),
};

/** The slots a joined channel may need, in the order their capabilities are told. */
export const CAPABILITY_SLOTS: readonly CapabilitySlot[] = [PRESENCE, CRYPTO, WHISPERS];

/**
 * The link the connector gives its joined guarded channels: their `whisper()` and whisper listeners load the whisper
 * capability on first use, in the order they were made. A failed download reaches each channel that waited for it
 * (`report`) once, as `load_failed`, however many whispers or listeners it made meanwhile; the next whisper or listener
 * downloads it again, and once it has arrived every joined channel with whisper listeners hears whispers (the
 * capability's `joined` hook), those registered during the failure too.
 */
export function whisperLink(capabilities: Capabilities, report: (channel: MercurePrivateChannel, error: MercureError) => void): WhisperLink {
    /** The channels waiting for the download in flight (each told once if it fails), or null when none is in flight. */
    let waiting: Set<MercurePrivateChannel> | null = null;
    const through = (channel: MercurePrivateChannel, call: (link: WhisperLink) => void): void => {
        const whispers = capabilities.use(WHISPERS);
        if (!(whispers instanceof Promise)) return call(whispers.link);
        if (waiting === null) {
            // The first to wait for this download hears how it ended before the others' calls run.
            const group = (waiting = new Set());
            whispers.then(
                () => (waiting = null),
                (cause: unknown) => {
                    waiting = null;
                    for (const each of group) report(each, loadFailed(each.name, WHISPERS.part, cause, "its whispers were not sent nor received, and the next whisper or whisper listener downloads it again"));
                },
            );
        }
        waiting.add(channel);
        whispers.then(({ link }) => call(link), () => undefined);
    };
    return {
        whisper: (channel, event, data) => through(channel, (link) => link.whisper(channel, event, data)),
        listening: (channel) => through(channel, (link) => link.listening(channel)),
    };
}
