/**
 * The provider adapters against the fake X and LinkedIn servers (real HTTP, no stack needed):
 * request shapes and headers, media upload flows, typed failures, and look-up after an unknown
 * outcome.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { microblogAdapter } from '../../activities/providers/microblog.js';
import { pronetAdapter } from '../../activities/providers/pronet.js';
import { ProviderFailure, createOnce, type MediaSource, type SocialAccount } from '../../activities/providers/social.js';
import { FakeX } from '../fakes/x.js';
import { FakeLinkedIn } from '../fakes/linkedin.js';

function media(contentType: string, size: number, fileName = `ws/${size}.bin`): MediaSource {
  const bytes = Buffer.alloc(size, 7);
  return { fileName, contentType, size, read: async (o, l) => bytes.subarray(o, o + l) };
}

async function failure(p: Promise<unknown>): Promise<ProviderFailure> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ProviderFailure);
    return e as ProviderFailure;
  }
  throw new Error('expected a ProviderFailure');
}

describe('microblog adapter (X API v2)', () => {
  const x = new FakeX();
  let acct: SocialAccount;
  beforeAll(async () => {
    await x.listen();
    x.addUser('1001', 'tok-x');
    acct = { provider: 'microblog', externalAccountId: '1001', accessToken: 'tok-x', apiBaseUrl: x.url , allowList: ['127.0.0.1'] };
  });
  afterAll(() => x.close());
  beforeEach(() => x.clearFaults());

  it('posts a tweet with an image and a video, then a reply', async () => {
    const res = await microblogAdapter.create(acct, { type: 'post', text: 'hello world', media: [media('image/png', 1000), media('video/mp4', 9 * 1024 * 1024)] });
    const tweet = x.tweets.find((t) => t.id === res.externalId)!;
    expect(tweet).toMatchObject({ text: 'hello world', authorId: '1001', replyTo: null });
    expect(tweet.mediaIds).toHaveLength(2);
    expect(x.calls('POST /2/media/upload')).toHaveLength(1);
    expect(x.calls('POST /2/media/upload/{id}/append')).toHaveLength(3);
    expect(x.calls('POST /2/tweets')[0]!.headers.authorization).toBe('Bearer tok-x');
    expect(res.externalUrl).toContain(res.externalId);

    const reply = await microblogAdapter.create(acct, { type: 'reply', text: 'second', media: [], parentExternalId: res.externalId });
    expect(x.tweets.find((t) => t.id === reply.externalId)!.replyTo).toBe(res.externalId);
  });

  it('classifies failures by type', async () => {
    x.inject('POST /2/tweets', { status: 429, headers: { 'retry-after': '7' }, body: { title: 'Too Many Requests' } });
    const rl = await failure(microblogAdapter.create(acct, { type: 'post', text: 'rl', media: [] }));
    expect(rl.kind).toBe('rate_limited');
    expect(rl.opts.retryAfterMs).toBe(7000);

    x.inject('POST /2/tweets', { status: 500, body: { title: 'Internal Error' } });
    expect((await failure(microblogAdapter.create(acct, { type: 'post', text: 't', media: [] }))).kind).toBe('transient');

    const bad = { ...acct, accessToken: 'revoked' };
    expect((await failure(microblogAdapter.create(bad, { type: 'post', text: 'x', media: [] }))).kind).toBe('credentials_revoked');

    await microblogAdapter.create(acct, { type: 'post', text: 'dup', media: [] });
    const dup = await failure(microblogAdapter.create(acct, { type: 'post', text: 'dup', media: [] }));
    expect(dup.kind).toBe('invalid_input');
    expect(dup.opts.code).toBe('duplicate_content');

    expect((await failure(microblogAdapter.create(acct, { type: 'post', text: 'y'.repeat(281), media: [] }))).kind).toBe('invalid_input');
  });

  it('after a timeout finds the tweet instead of posting it again', async () => {
    process.env.PROVIDER_TIMEOUT_MS = '500';
    try {
      x.inject('POST /2/tweets', { timeoutMs: 2000, afterCommit: true });
      const since = new Date();
      const res = await createOnce(microblogAdapter, acct, { type: 'post', text: 'lost answer', media: [] }, since);
      expect(x.tweets.filter((t) => t.text === 'lost answer')).toHaveLength(1);
      expect(res.externalId).toBe(x.tweets.find((t) => t.text === 'lost answer')!.id);

      x.inject('POST /2/tweets', { timeoutMs: 2000, afterCommit: false });
      const f = await failure(createOnce(microblogAdapter, acct, { type: 'post', text: 'never arrived', media: [] }, new Date()));
      expect(f.kind).toBe('outcome_unknown');
      expect(x.calls('POST /2/tweets').filter((r) => (r.body as { text: string }).text === 'never arrived')).toHaveLength(1);
    } finally {
      delete process.env.PROVIDER_TIMEOUT_MS;
    }
  });
});

describe('pronet adapter (LinkedIn REST)', () => {
  const li = new FakeLinkedIn();
  let member: SocialAccount;
  let page: SocialAccount;
  beforeAll(async () => {
    await li.listen();
    li.addAccount('tok-li', ['urn:li:person:abc', 'urn:li:organization:42']);
    member = { provider: 'pronet', externalAccountId: 'abc', accessToken: 'tok-li', apiBaseUrl: li.url , allowList: ['127.0.0.1'] };
    page = { provider: 'pronetPage', externalAccountId: '42', accessToken: 'tok-li', apiBaseUrl: li.url , allowList: ['127.0.0.1'] };
  });
  afterAll(() => li.close());

  it('posts with images, video and comments with the required headers', async () => {
    const post = await pronetAdapter.create(member, { type: 'post', text: 'Launch (beta) #1', media: [media('image/png', 10), media('image/jpeg', 20)] });
    expect(post.externalId).toMatch(/^urn:li:share:/);
    const call = li.calls('POST /rest/posts')[0]!;
    expect(call.headers['linkedin-version']).toMatch(/^\d{6}$/);
    expect(call.headers['x-restli-protocol-version']).toBe('2.0.0');
    expect(call.body).toMatchObject({ author: 'urn:li:person:abc', lifecycleState: 'PUBLISHED', visibility: 'PUBLIC', commentary: 'Launch \\(beta\\) \\#1' });
    expect((call.body as { content: { multiImage: { images: unknown[] } } }).content.multiImage.images).toHaveLength(2);

    const video = await pronetAdapter.create(page, { type: 'post', text: 'video', media: [media('video/mp4', 5 * 1024 * 1024)] });
    expect(li.posts.find((p) => p.urn === video.externalId)!.author).toBe('urn:li:organization:42');
    expect(li.calls('PUT /upload').length).toBe(4);

    const comment = await pronetAdapter.create(member, { type: 'reply', text: 'thread 1', media: [], parentExternalId: post.externalId });
    expect(comment.externalId).toBe(li.comments[0]!.urn);
    expect(li.comments[0]).toMatchObject({ object: post.externalId, actor: 'urn:li:person:abc', text: 'thread 1' });

    const reshare = await pronetAdapter.create(page, { type: 'reshare', text: '', media: [], parentExternalId: post.externalId });
    expect(li.posts.find((p) => p.urn === reshare.externalId)!.reshareParent).toBe(post.externalId);
  });

  it('comments on an external activity and classifies failures', async () => {
    const ext = li.seedExternalPost('activity');
    const c = await pronetAdapter.create(member, { type: 'comment', text: 'nice', media: [], parentExternalId: ext.urn });
    expect(c.externalUrl).toContain(ext.urn);

    li.inject('POST /rest/posts', { status: 429, headers: { 'retry-after': '3' } });
    const rl = await failure(pronetAdapter.create(member, { type: 'post', text: 'a', media: [] }));
    expect([rl.kind, rl.opts.retryAfterMs]).toEqual(['rate_limited', 3000]);
    li.inject('POST /rest/posts', { status: 503 });
    expect((await failure(pronetAdapter.create(member, { type: 'post', text: 'b', media: [] }))).kind).toBe('transient');
    expect((await failure(pronetAdapter.create({ ...member, accessToken: 'nope' }, { type: 'post', text: 'c', media: [] }))).kind).toBe('credentials_revoked');
    expect((await failure(pronetAdapter.create({ ...member, externalAccountId: 'other' }, { type: 'post', text: 'd', media: [] }))).kind).toBe('credentials_revoked');
    expect((await failure(pronetAdapter.create(member, { type: 'comment', text: 'e', media: [], parentExternalId: 'urn:li:activity:1' }))).kind).toBe('invalid_input');
  });

  it('after a timeout finds the post and the comment instead of sending them again', async () => {
    process.env.PROVIDER_TIMEOUT_MS = '500';
    try {
      li.inject('POST /rest/posts', { timeoutMs: 2000, afterCommit: true });
      const res = await createOnce(pronetAdapter, member, { type: 'post', text: 'timeout post', media: [] }, new Date());
      expect(li.posts.filter((p) => p.commentary === 'timeout post').map((p) => p.urn)).toEqual([res.externalId]);

      const ext = li.seedExternalPost('ugcPost');
      li.inject('POST /rest/socialActions/{urn}/comments', { timeoutMs: 2000, afterCommit: true });
      const c = await createOnce(pronetAdapter, member, { type: 'comment', text: 'timeout comment', media: [], parentExternalId: ext.urn }, new Date());
      expect(li.comments.filter((x) => x.text === 'timeout comment').map((x) => x.urn)).toEqual([c.externalId]);
    } finally {
      delete process.env.PROVIDER_TIMEOUT_MS;
    }
  });
});
