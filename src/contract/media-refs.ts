/**
 * Caller media of a task, by role, whatever the family calls the fields. Worked out at submit and
 * stored with the task, so providers (and later the submit-time prober) need not know each
 * family's field names. `field` is the caller's field name with index, for error messages.
 */
export interface MediaRef {
  url: string;
  /** e.g. `image_urls[2]`, `content[1].image_url.url`, `first_image[0]` */
  field: string;
  /** Set at submit once the medium passed review: its copy in the task's input folder. */
  stored?: string;
  /** What review found (kind, format, pixel size, duration, ...). */
  facts?: { kind: string; format: string; bytes: number; width?: number; height?: number; duration?: number; fps?: number };
}

export interface MediaRefs {
  firstFrame?: MediaRef;
  lastFrame?: MediaRef;
  images: MediaRef[];
  videos: MediaRef[];
  audios: MediaRef[];
}

/** `urls` of a list field as refs named `field[i]`. */
export function refsOf(field: string, urls: readonly string[] | undefined): MediaRef[] {
  return (urls ?? []).map((url, i) => ({ url, field: `${field}[${i}]` }));
}

/** Every ref with its role, frames first, in field order. */
export function allRefs(media: MediaRefs): Array<{ role: 'frames' | 'images' | 'videos' | 'audios'; ref: MediaRef }> {
  return [
    ...[media.firstFrame, media.lastFrame].filter((r): r is MediaRef => r !== undefined).map((ref) => ({ role: 'frames' as const, ref })),
    ...media.images.map((ref) => ({ role: 'images' as const, ref })),
    ...media.videos.map((ref) => ({ role: 'videos' as const, ref })),
    ...media.audios.map((ref) => ({ role: 'audios' as const, ref })),
  ];
}

export function mediaRefs(parts: Partial<MediaRefs> = {}): MediaRefs {
  return { images: [], videos: [], audios: [], ...parts };
}
