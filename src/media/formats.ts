/** The file extension and content type of each media format the gateway stores and serves. */
export const MEDIA_FORMATS: Readonly<Record<string, { ext: string; contentType: string }>> = {
  png: { ext: 'png', contentType: 'image/png' },
  jpeg: { ext: 'jpg', contentType: 'image/jpeg' },
  webp: { ext: 'webp', contentType: 'image/webp' },
  gif: { ext: 'gif', contentType: 'image/gif' },
  bmp: { ext: 'bmp', contentType: 'image/bmp' },
  tiff: { ext: 'tiff', contentType: 'image/tiff' },
  heic: { ext: 'heic', contentType: 'image/heic' },
  heif: { ext: 'heif', contentType: 'image/heif' },
  avif: { ext: 'avif', contentType: 'image/avif' },
  mp4: { ext: 'mp4', contentType: 'video/mp4' },
  mov: { ext: 'mov', contentType: 'video/quicktime' },
  webm: { ext: 'webm', contentType: 'video/webm' },
  wav: { ext: 'wav', contentType: 'audio/wav' },
  mp3: { ext: 'mp3', contentType: 'audio/mpeg' },
};

const BY_EXT = new Map(Object.values(MEDIA_FORMATS).map((f) => [`.${f.ext}`, f.contentType]));
BY_EXT.set('.jpeg', 'image/jpeg');

/** The content type of a stored file by its extension (`.png`), or undefined. */
export function contentTypeOfExtension(ext: string): string | undefined {
  return BY_EXT.get(ext.toLowerCase());
}
