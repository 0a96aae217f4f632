import type { AssetRecord } from '../store/types.js';
import { unixSeconds } from './reply-context.js';
import type { AssetReply } from '../contract/gateway-replies.js';

/** An asset as the upload and query calls answer it (docs/reference/api/media.md#assets). */
export function assetReply(a: AssetRecord): AssetReply {
  return {
    id: a.id,
    object: 'asset',
    status: a.status,
    reason: a.reason,
    kind: a.kind,
    format: a.format,
    width: a.width,
    height: a.height,
    duration: a.duration,
    bytes: a.bytes,
    created: unixSeconds(a.createdAt),
    expires_at: unixSeconds(a.expiresAt),
  };
}
