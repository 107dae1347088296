import { buildOpenApi } from '/work/wt/trust-openapi/api/openapi.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
const doc: any = buildOpenApi('http://x');
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
(addFormatsModule as any)(ajv);
ajv.addSchema({ $id: 'https://doc.local/openapi.json', components: doc.components });
let n = 0;
for (const [path, item] of Object.entries<any>(doc.paths)) for (const [m, op] of Object.entries<any>(item)) {
  const media = [op.requestBody?.content?.['application/json'], ...Object.entries<any>(op.responses).filter(([s]) => s.startsWith('2')).map(([, r]) => r.content?.['application/json'])].filter(Boolean);
  for (const md of media) {
    const v = ajv.compile({ $id: `https://doc.local/${n++}`, ...JSON.parse(JSON.stringify(md.schema).replace(/"#\/components/g, '"https://doc.local/openapi.json#/components')) });
    if (!v(md.example)) console.log(m, path, JSON.stringify(v.errors!.map((e) => `${e.instancePath} ${e.message}`)).slice(0, 300));
  }
}
