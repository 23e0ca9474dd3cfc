// What people type into the portal's forms, checked alike everywhere: lengths in Unicode code
// points (an emoji is one character, not two UTF-16 code units), and the characters no name or
// address should carry unseen.

export const codePoints = (text: string): number => [...text].length;

/** C0 and C1 controls (ESC, DEL, line breaks…): Unicode category Cc. */
export const hasControl = (text: string): boolean => /\p{Cc}/u.test(text);

/** Controls, and format characters that show nothing (a zero-width space, a bidi override, a soft hyphen): Cc and Cf. */
export const hasControlOrFormat = (text: string): boolean => /[\p{Cc}\p{Cf}]/u.test(text);
