/** sha256 over every file under `src` (path and bytes), in a fixed order: "sha256:<hex>". */
export function sourceDigest(src: string): string;
