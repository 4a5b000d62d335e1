import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { MediaStorePort, RichImage } from '../../application/rich/rich-provider.port.js';
import type { ImageType } from '../../domain/rich/image-type.js';
import type { ReadDb } from '../../projections/shared/read-db.js';

type MediaDb = {
  rich_media: {
    media_id: string;
    account_id: string;
    content_type: string;
    sha256: string;
    bytes: number;
    data: Uint8Array;
    created_at?: Date | string;
  };
};

/**
 * The images the rich channel fetched (docs/rich-messaging.md#images), in the `rich_media` table: one row per account
 * and content, keyed by its digest, so the same image fetched twice is kept once.
 */
export class KyselyMediaStore implements MediaStorePort {
  private readonly db: Kysely<ReadDb & MediaDb>;

  constructor(db: Kysely<ReadDb>) {
    this.db = db.withTables<MediaDb>();
  }

  async put(accountId: string, data: Uint8Array, contentType: ImageType): Promise<{ mediaId: string; sha256: string }> {
    const sha256 = createHash('sha256').update(data).digest('hex');
    const mediaId = `med_${createHash('sha256').update(`${accountId}|${sha256}`).digest('hex').slice(0, 32)}`;
    await this.db
      .insertInto('rich_media')
      .values({ media_id: mediaId, account_id: accountId, content_type: contentType, sha256, bytes: data.length, data: Buffer.from(data) })
      .onConflict((oc) => oc.column('media_id').doNothing())
      .execute();
    return { mediaId, sha256 };
  }

  async get(mediaId: string): Promise<RichImage | null> {
    const r = await this.db.selectFrom('rich_media').select(['content_type', 'data']).where('media_id', '=', mediaId).executeTakeFirst();
    return r ? { contentType: r.content_type as ImageType, data: new Uint8Array(r.data) } : null;
  }
}
