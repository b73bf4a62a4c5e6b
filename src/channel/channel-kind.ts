// The channel kinds are read below the channel layer too (auth, error messages): they live in src/topic/channel-kind.ts.
export { CHANNEL_PREFIXES, channelKind, type ChannelKind } from "../topic/channel-kind";
