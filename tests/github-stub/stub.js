#!/usr/bin/env node
// A loopback stand-in for GitHub's pull request API, held to GitHub's own
// published OpenAPI description (the @octokit/openapi package): a request is
// accepted only if its path, query, headers and body match the description of
// the operation, and answers are the description's own examples and
// documented error shapes (each checked against its schema before it is sent).
//
//   node stub.js --spec api.github.com.json --token T [--git-root DIR]
//                [--log FILE] [--port 0]
//
// Prints the port on its first line. Repositories named "missing",
// "ratelimited", "ratelimited429" and "noscope" answer 404, 403 (rate
// limit), 429 and 403 (token lacking scope). With --git-root, the head branch
// must exist in DIR/OWNER/REPO.git (the repository the test pushed to). A
// second pull request for the same head is refused with 422, as GitHub does.
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const args = {};
for (let i = 2; i < process.argv.length; i += 2)
  args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
if (!args.spec || !args.token) {
  console.error('usage: stub.js --spec FILE --token T [--git-root DIR] [--log FILE] [--port N]');
  process.exit(2);
}
const spec = JSON.parse(fs.readFileSync(args.spec, 'utf8'));
const API_VERSIONS = ['2022-11-28'];
const DOCS = 'https://docs.github.com/rest/pulls/pulls#create-a-pull-request';

function deref(o) {
  while (o && typeof o === 'object' && o.$ref) {
    const parts = o.$ref.replace(/^#\//, '').split('/');
    o = parts.reduce((a, k) => a[k.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
  }
  return o;
}

// JSON Schema (the subset the description uses): errors as strings.
function validate(schema, v, where, errs) {
  schema = deref(schema);
  if (!schema) return errs;
  if (schema.allOf) schema.allOf.forEach((s) => validate(s, v, where, errs));
  for (const k of ['oneOf', 'anyOf']) {
    if (schema[k]) {
      const ok = schema[k].filter((s) => validate(s, v, where, []).length === 0);
      if (ok.length === 0 || (k === 'oneOf' && ok.length > 1 && v !== null))
        errs.push(`${where}: does not match ${k}`);
    }
  }
  if (v === null) {
    if (schema.type && !schema.nullable && schema.type !== 'null')
      errs.push(`${where}: null is not allowed`);
    return errs;
  }
  const t = schema.type;
  const types = Array.isArray(t) ? t : t ? [t] : [];
  if (types.length) {
    const actual = Array.isArray(v) ? 'array' : typeof v === 'number'
      ? (Number.isInteger(v) ? 'integer' : 'number') : typeof v;
    const ok = types.some((x) => x === actual || (x === 'number' && actual === 'integer'));
    if (!ok) { errs.push(`${where}: expected ${types.join('|')}, got ${actual}`); return errs; }
  }
  if (schema.enum && !schema.enum.includes(v))
    errs.push(`${where}: ${JSON.stringify(v)} not one of ${schema.enum.join(', ')}`);
  if (typeof v === 'object' && !Array.isArray(v)) {
    for (const r of schema.required || [])
      if (!(r in v)) errs.push(`${where}: missing required "${r}"`);
    const props = schema.properties || {};
    for (const [k, x] of Object.entries(v)) {
      if (props[k]) validate(props[k], x, `${where}.${k}`, errs);
      else if (schema.additionalProperties === false)
        errs.push(`${where}: unknown property "${k}"`);
      else if (typeof schema.additionalProperties === 'object')
        validate(schema.additionalProperties, x, `${where}.${k}`, errs);
    }
  }
  if (Array.isArray(v) && schema.items)
    v.forEach((x, i) => validate(schema.items, x, `${where}[${i}]`, errs));
  return errs;
}

const pulls = spec.paths['/repos/{owner}/{repo}/pulls'];
const created = new Map();	// "owner/repo:head" -> pull request
const log = args.log ? fs.openSync(args.log, 'a') : null;

function example(resp) {
  const c = deref(resp).content['application/json'];
  return JSON.parse(JSON.stringify(deref(c.examples.default).value));
}

function send(res, op, status, body, headers, isExample) {
  // Our own answers must match the description too. (The description's
  // examples are sent as they are: some do not match its own schemas.)
  const r = deref(op.responses[String(status)] ||
    spec.components.responses[{ 401: 'requires_authentication', 404: 'not_found', 429: 'forbidden' }[status]]);
  const errs = isExample ? [] : r ? validate(r.content['application/json'].schema, body, 'response', []) : ['no documented response'];
  if (errs.length) {
    status = 500;
    body = { message: 'stub bug: ' + errs.join('; ') };
  }
  res.writeHead(status, Object.assign({ 'Content-Type': 'application/json; charset=utf-8' }, headers || {}));
  res.end(JSON.stringify(body));
}

function refuse(res, status, why) {
  // Not GitHub's behaviour: a request that the description does not allow
  // fails loudly so the test that sent it fails.
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ message: 'stub: request does not match the OpenAPI description: ' + why }));
}

function checkHeaders(req, res, op) {
  const accept = req.headers['accept'] || '';
  if (!accept.split(',').map((s) => s.trim()).includes('application/vnd.github+json'))
    return refuse(res, 415, `Accept must be application/vnd.github+json, got "${accept}"`), false;
  const ver = req.headers['x-github-api-version'];
  if (!API_VERSIONS.includes(ver))
    return refuse(res, 400, `X-GitHub-Api-Version must be one of ${API_VERSIONS}, got "${ver}"`), false;
  if (!req.headers['user-agent'])
    return refuse(res, 403, 'User-Agent is required by GitHub'), false;
  const auth = req.headers['authorization'];
  if (!auth) {
    send(res, op, 401, { message: 'Requires authentication', documentation_url: DOCS });
    return false;
  }
  const m = /^(Bearer|token) (.+)$/.exec(auth);
  if (!m || m[2] !== args.token) {
    send(res, op, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
    return false;
  }
  return true;
}

function special(res, op, repo) {
  if (repo === 'missing') {
    send(res, op, 404, { message: 'Not Found', documentation_url: DOCS });
    return true;
  }
  if (repo === 'ratelimited') {
    const reset = Math.floor(Date.now() / 1000) + 120;
    send(res, op, 403, { message: 'API rate limit exceeded for user ID 1.', documentation_url: 'https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting' },
      { 'X-RateLimit-Limit': '5000', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(reset), 'X-RateLimit-Resource': 'core' });
    return true;
  }
  if (repo === 'ratelimited429') {
    send(res, op, 429, { message: 'You have exceeded a secondary rate limit.', documentation_url: 'https://docs.github.com/rest/overview/resources-in-the-rest-api#secondary-rate-limits' },
      { 'Retry-After': '60' });
    return true;
  }
  if (repo === 'noscope') {
    send(res, op, 403, { message: 'Resource not accessible by personal access token', documentation_url: DOCS });
    return true;
  }
  return false;
}

function branchExists(owner, repo, branch) {
  if (!args['git-root']) return true;
  if (!branch) return false;
  try {
    execFileSync('git', ['--git-dir', path.join(args['git-root'], owner, repo + '.git'),
      'rev-parse', '--verify', '-q', 'refs/heads/' + branch], { stdio: 'ignore' });
    return true;
  } catch (e) {
    return false;
  }
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    if (log !== null) {
      const h = Object.assign({}, req.headers);
      delete h.authorization;	// the one place the token may be
      fs.writeSync(log, JSON.stringify({ method: req.method, url: req.url, headers: h, body: raw }) + '\n');
    }
    const u = new URL(req.url, 'http://stub');
    const m = /^\/repos\/([^/]+)\/([^/]+)\/pulls$/.exec(u.pathname);
    if (!m) return refuse(res, 404, `no operation at ${req.method} ${u.pathname}`);
    const [owner, repo] = [decodeURIComponent(m[1]), decodeURIComponent(m[2])];
    if (req.method === 'POST') {
      const op = pulls.post;
      if (!checkHeaders(req, res, op)) return;
      if (special(res, op, repo)) return;
      if (!/^application\/json\b/.test(req.headers['content-type'] || ''))
        return refuse(res, 415, 'Content-Type must be application/json');
      let body;
      try { body = JSON.parse(raw); } catch (e) { return refuse(res, 400, 'body is not JSON'); }
      const rb = deref(op.requestBody);
      const errs = validate(rb.content['application/json'].schema, body, 'body', []);
      if (!('title' in body) && !('issue' in body))
        errs.push('body: "title" is required unless "issue" is given');
      if (errs.length)
        return send(res, op, 422, { message: 'Invalid request.\n\n' + errs.join('\n'), documentation_url: DOCS,
          errors: errs.map((e) => ({ resource: 'PullRequest', code: 'invalid', message: e })) });
      const head = body.head.includes(':') ? body.head.split(':')[1] : body.head;
      if (!branchExists(owner, repo, head))
        return send(res, op, 422, { message: 'Validation Failed', documentation_url: DOCS,
          errors: [{ resource: 'PullRequest', field: 'head', code: 'invalid' }] });
      if (!branchExists(owner, repo, body.base))
        return send(res, op, 422, { message: 'Validation Failed', documentation_url: DOCS,
          errors: [{ resource: 'PullRequest', field: 'base', code: 'invalid' }] });
      const key = `${owner}/${repo}:${head}`;
      if (created.has(key))
        return send(res, op, 422, { message: 'Validation Failed', documentation_url: DOCS,
          errors: [{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${owner}:${head}.` }] });
      const pr = example(op.responses['201']);
      created.set(key, pr);
      return send(res, op, 201, pr, { Location: pr.url }, true);
    }
    if (req.method === 'GET') {
      const op = pulls.get;
      if (!checkHeaders(req, res, op)) return;
      const params = op.parameters.map(deref).filter((p) => p.in === 'query');
      for (const [k, v] of u.searchParams) {
        const p = params.find((x) => x.name === k);
        if (!p) return refuse(res, 400, `unknown query parameter "${k}"`);
        const val = p.schema.type === 'integer' ? Number(v) : v;
        const errs = validate(p.schema, val, 'query.' + k, []);
        if (errs.length) return refuse(res, 400, errs.join('; '));
      }
      const head = u.searchParams.get('head') || '';
      const hb = head.includes(':') ? head.split(':')[1] : head;
      const found = created.has(`${owner}/${repo}:${hb}`) && head.startsWith(owner + ':');
      return send(res, op, 200, found ? example(op.responses['200']).slice(0, 1) : [], {}, true);
    }
    return refuse(res, 405, `${req.method} is not described here`);
  });
});

server.listen(Number(args.port || 0), '127.0.0.1', () => {
  process.stdout.write(server.address().port + '\n');
});
// Bounded life: a stub left behind by a killed test goes away by itself.
setTimeout(() => process.exit(0), 5 * 60 * 1000).unref();
