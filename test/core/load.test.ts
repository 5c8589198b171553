/**
 * loadPlugins' messages when a module is not found: the plugin itself, or one of its own
 * imports. They name what to install as the user or the plugin wrote it, never a path of this
 * machine.
 */
import t from 'tap'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isModuleNotFound, loadPlugins } from '../../core/load.js'
import { isDocsplitError } from '../../core/errors.js'
import { pluginFolder } from '../helpers/plugins.js'

const dir = pluginFolder(t, 'docsplit-load-')

const write = (path: string, text: string): void => {
  mkdirSync(join(dir, path, '..'), { recursive: true })
  writeFileSync(join(dir, path), text)
}

async function failure (name: string): Promise<string> {
  try {
    await loadPlugins([name])
  } catch (error) {
    if (!isDocsplitError(error)) throw error
    t.equal(error.code, 'DOCSPLIT_PLUGIN_LOAD_FAILED', name)
    t.notOk(error.message.includes(dir), `${name}: no path of this machine`)
    return error.message
  }
  throw new Error(`${name} loaded`)
}

t.test('a plugin that is missing itself: not found', async (t) => {
  t.equal(await failure('./nowhere.js'), 'plugin module "./nowhere.js" was not found; install it or give a path')
  t.equal(await failure('docsplit-plugin-nowhere'), 'plugin module "docsplit-plugin-nowhere" was not found; install it or give a path')
  t.equal(await failure('@nowhere/docsplit-plugin/sub.js'), 'plugin module "@nowhere/docsplit-plugin/sub.js" was not found; install it or give a path')
})

t.test('a plugin found whose import is missing: names the dependency to install', async (t) => {
  write('x.js', "import 'docsplit-test-missing-dep'\nexport default {}\n")
  t.equal(await failure('./x.js'), 'plugin module "./x.js" could not load its dependency "docsplit-test-missing-dep"; install it')
  write('scoped.mjs', "import { a } from '@docsplit-test/missing/sub/path.js'\nexport default a\n")
  t.equal(await failure('./scoped.mjs'), 'plugin module "./scoped.mjs" could not load its dependency "@docsplit-test/missing"; install it')
  write('nested/index.js', "import './lib/helper.js'\nexport default {}\n")
  write('nested/lib/helper.js', "import 'docsplit-test-deep-dep'\n")
  t.equal(await failure('./nested/index.js'), 'plugin module "./nested/index.js" could not load its dependency "docsplit-test-deep-dep"; install it', 'from a file of the plugin')
  write('common.cjs', "module.exports = require('docsplit-test-cjs-dep')\n")
  t.equal(await failure('./common.cjs'), 'plugin module "./common.cjs" could not load its dependency "docsplit-test-cjs-dep"; install it', 'a CommonJS plugin\'s require')
})

t.test('a plugin package found whose import is missing, by package name', async (t) => {
  write('node_modules/docsplit-plugin-needy/package.json', JSON.stringify({ name: 'docsplit-plugin-needy', type: 'module', main: 'index.js' }))
  write('node_modules/docsplit-plugin-needy/index.js', "import 'docsplit-test-missing-dep'\nexport default {}\n")
  t.equal(await failure('docsplit-plugin-needy'), 'plugin module "docsplit-plugin-needy" could not load its dependency "docsplit-test-missing-dep"; install it')
  // A dependency that is there, whose file is not: named from the package on.
  write('node_modules/half-installed/package.json', JSON.stringify({ name: 'half-installed', type: 'module' }))
  write('odd.js', "import 'half-installed/gone.js'\nexport default {}\n")
  t.equal(await failure('./odd.js'), 'plugin module "./odd.js" could not load its dependency "half-installed/gone.js"; reinstall it')
})

t.test('a file of its own that is missing: named relative to the plugin', async (t) => {
  write('own/index.js', "import './lib/gone.js'\nexport default {}\n")
  t.equal(await failure('./own/index.js'), 'plugin module "./own/index.js" could not load "./lib/gone.js", which it imports: no such file')
  write('own/outside.js', "import '../../docsplit-test-gone.js'\nexport default {}\n")
  t.equal(await failure('./own/outside.js'), 'plugin module "./own/outside.js" could not load "docsplit-test-gone.js", which it imports: no such file', 'outside the plugin\'s folder: the file name only')
  write('own/common.cjs', "module.exports = require('./lib/gone.cjs')\n")
  t.equal(await failure('./own/common.cjs'), 'plugin module "./own/common.cjs" could not load "./lib/gone.cjs", which it imports: no such file', 'require() names it as written')
})

t.test('a missing module is told by its code, or by Node\'s message when a loader hook dropped the code', async (t) => {
  t.ok(isModuleNotFound(Object.assign(new Error('x'), { code: 'ERR_MODULE_NOT_FOUND' })))
  t.ok(isModuleNotFound(Object.assign(new Error('x'), { code: 'MODULE_NOT_FOUND' })))
  t.ok(isModuleNotFound(new Error("Cannot find package 'left-pad' imported from /a/b.js")))
  t.ok(isModuleNotFound(new Error("Cannot find module '/a/nowhere.js' imported from /a/b.js")))
  t.notOk(isModuleNotFound(new Error('boom')))
  t.notOk(isModuleNotFound('Cannot find module \'x\''))
})

t.test('a file named without ./, a directory, an empty name: said so, with no path of this machine', async (t) => {
  write('plugins/ini.mjs', 'export default null\n')
  t.equal(await failure('plugins/ini.mjs'), 'plugin module "plugins/ini.mjs" is not a package; to load the file, give it as a path: ./plugins/ini.mjs')
  t.equal(await failure('./plugins'), 'plugin module "./plugins" is a directory; give the file to load (such as ./plugins/index.js) or a package name')
  t.equal(await failure(''), 'a plugin module needs a name: a package name or a path')
})

t.test('a module that never finishes loading while it keeps the process busy: a failure after the timeout', async (t) => {
  write('forever.js', 'const timer = setInterval(() => {}, 1000)\nglobalThis.docsplitTestTimer = timer\nawait new Promise(() => {})\nexport default {}\n')
  t.teardown(() => { clearInterval((globalThis as { docsplitTestTimer?: NodeJS.Timeout }).docsplitTestTimer) })
  const started = Date.now()
  const error = await loadPlugins(['./forever.js'], 300).then(() => undefined, (e: unknown) => e)
  t.ok(isDocsplitError(error) && error.code === 'DOCSPLIT_PLUGIN_LOAD_FAILED', 'DOCSPLIT_PLUGIN_LOAD_FAILED')
  t.equal((error as Error).message, 'plugin module "./forever.js" did not finish loading within 0.3 s (a top-level await that never settles?)')
  t.ok(Date.now() - started < 5000, 'after the timeout, not never')
})

t.test('a module that throws a DocsplitError while loading is still named, as a load failure', async (t) => {
  const errors = new URL('../../core/errors.ts', import.meta.url).href
  write('own-error.js', `import { DocsplitError } from '${errors}'\nthrow new DocsplitError('DOCSPLIT_EXTRA_UNAVAILABLE', 'needs the foo extra')\n`)
  t.equal(await failure('./own-error.js'), 'plugin module "./own-error.js" threw while loading: needs the foo extra')
})

t.test('a module that exports an empty list: a load failure, as one that exports no plugin', async (t) => {
  write('empty.js', 'export default []\n')
  t.equal(await failure('./empty.js'), 'plugin module "./empty.js" default-exports an empty list; it must export a plugin made with definePlugin (or a list of them)')
})

t.test('a module given twice, under the same name or another, is loaded once', async (t) => {
  write('twice.mjs', "export default { kind: 'packer', name: 'load-twice-test', docsplit: '^1', create: () => ({ push () {}, end () {} }) }\n")
  await t.resolves(loadPlugins(['./twice.mjs', './twice.mjs']), 'the same name twice')
  await t.resolves(loadPlugins([join(dir, 'twice.mjs')]), 'its absolute path, in a later call')
  symlinkSync(join(dir, 'twice.mjs'), join(dir, 'linked.mjs'))
  await t.resolves(loadPlugins(['./linked.mjs']), 'a link to it')
})

t.test('a module that throws with its own path in the message: shown as the name given', async (t) => {
  write('own-path.mjs', "import { fileURLToPath } from 'node:url'\nthrow new Error(`cannot read ${fileURLToPath(import.meta.url)}.json`)\n")
  t.equal(await failure('./own-path.mjs'), 'plugin module "./own-path.mjs" threw while loading: cannot read ./own-path.mjs.json')
  write('sub/vocab.mjs', "import { readFileSync } from 'node:fs'\nreadFileSync(new URL('./vocab.json', import.meta.url))\n")
  t.match(await failure('./sub/vocab.mjs'), /^plugin module "\.\/sub\/vocab\.mjs" threw while loading: ENOENT: no such file or directory, open '\.\/sub\/vocab\.json'$/, 'a file beside it')
})
