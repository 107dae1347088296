// The anchor of bench/api-hotpath.ts: Koa with one handler answering a small JSON body, nothing else.
import Koa from 'koa';

const app = new Koa();
app.use((ctx) => {
  ctx.body = { data: { balance: 1000, updatedAt: '2026-01-01T00:00:00.000Z' } };
});
app.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
process.once('SIGTERM', () => process.exit(0));
