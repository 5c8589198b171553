/**
 * The first bytes of an OLE compound file (a legacy .xls, or an encrypted workbook): read by the
 * zip guard to refuse it, and by content detection (index.ts), which loads without the guard.
 */
export const OLE_MAGIC: readonly number[] = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]
