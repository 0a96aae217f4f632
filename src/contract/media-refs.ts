/**
 * Caller media of a task, by role, whatever the family calls the fields. Worked out at submit and
 * stored with the task, so providers (and later the submit-time prober) need not know each
 * family's field names. `field` is the caller's field name with index, for error messages.
 */
export interface MediaRef {
  url: string;
  /** e.g. `image_urls[2]`, `content[1].image_url.url`, `first_image[0]` */
  field: string;
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

export function mediaRefs(parts: Partial<MediaRefs> = {}): MediaRefs {
  return { images: [], videos: [], audios: [], ...parts };
}
