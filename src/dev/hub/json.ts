/**
 * Encode `value` as the reference hub encodes its own documents (Go's `json.MarshalIndent(v, "", "  ")`):
 * indented by two spaces, one member per line, and `<`, `>`, `&`, U+2028 and U+2029 escaped as `\u003c` and
 * so on. In an event's data that is several lines, so each goes out on its own `data:` line.
 */
export function goIndentedJson(value: unknown): string {
    // These characters only ever occur inside JSON strings, where the escape means the same character.
    return JSON.stringify(value, null, 2).replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
