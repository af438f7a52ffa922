// A word printed into a command line the user copies into a POSIX shell (the approval
// notice's `keel approvals …`, the `createdb` hint): a leaf module, so the CLI's start
// and the PostgreSQL store share it without loading each other.

/** A word as a POSIX shell reads it back: bare when it is safe, else single-quoted. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
