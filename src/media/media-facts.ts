/** What a probe found in a media file (probe.ts reads it, mp4-facts.ts for plain MP4/MOV video). */
export type MediaKind = 'image' | 'video' | 'audio';

export interface MediaFacts {
  kind: MediaKind;
  /** `jpeg`, `png`, `webp`, `bmp`, `tiff`, `gif`, `heic`, `heif`, `avif`, `mp4`, `mov`, `wav`, `mp3`, or what else was found. */
  format: string;
  bytes: number;
  width?: number;
  height?: number;
  /** Seconds (video, audio). */
  duration?: number;
  /** Frames per second (video). */
  fps?: number;
}
