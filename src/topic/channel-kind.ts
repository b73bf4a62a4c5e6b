/**
 * The four kinds of Laravel broadcast channel, told apart by the prefix of the full channel name.
 *
 * - `public`: no prefix; never authorized individually.
 * - `private`: `private-…`.
 * - `encrypted`: `private-encrypted-…`; end-to-end encrypted, plaintext never reaches it.
 * - `presence`: `presence-…`; a member roster on top of a private channel.
 */
export type ChannelKind = "public" | "private" | "encrypted" | "presence";

/** The prefixes of the four kinds, in the order `leave(name)` removes them: public, private, encrypted, presence. */
export const CHANNEL_PREFIXES = ["", "private-", "private-encrypted-", "presence-"] as const;

/**
 * The kind of the channel with this full name, whichever method created it: `private("encrypted-x")`
 * and `channel("private-encrypted-x")` both name the encrypted channel `private-encrypted-x`.
 */
export function channelKind(fullName: string): ChannelKind {
    // [spec] laravel-mercure §2.3: the server normalises names by these same prefixes.
    if (fullName.startsWith("private-encrypted-")) return "encrypted";
    if (fullName.startsWith("private-")) return "private";
    if (fullName.startsWith("presence-")) return "presence";
    return "public";
}
