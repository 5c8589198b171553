/**
 * One row per language: the grammar file, the file extensions, and which tree-sitter node types
 * are declarations (containers in the event stream), where their bodies are, which nodes are
 * wrappers around a declaration (`export ...`, `@decorator def ...`, `template <...> ...`), which
 * are the cases of a switch or match, which statements have no body node (Bash's `if`), which
 * hold a compound expression or a closure, which are a closure's parameters (Kotlin's), which
 * are a statement's label (`outer:`), and which nodes end the statement before them (Ruby's
 * heredoc bodies). Node names are each grammar's own (print a parsed snippet's tree to check
 * them).
 *
 * Rules shared by every language (syntax.ts): named nodes whose type contains `comment`, and the
 * decoration types below, belong to the declaration after them; a declaration whose body has no
 * members is a plain block; the members of a body are its named children; a body that follows
 * `else` with no clause node around them is the else clause (Java's `} else {`).
 */
import type { Node } from 'web-tree-sitter'

export interface LanguageSpec {
  /** The canonical input format. */
  name: string
  /** Other format names that select it. */
  aliases: string[]
  /** Vendored grammar: grammars/<grammar>.wasm. */
  grammar: string
  /** With the dot. */
  extensions: string[]
  /** Declaration node type → kind (`class`, `function`, ...), or a function of the node. */
  declarations: Record<string, string | ((node: Node) => string)>
  /** Node type → the declaration it wraps (or null when it wraps none). */
  wrappers?: Record<string, (node: Node) => Node | null>
  /** Node types that can be a declaration's body (looked up by the `body` field, then by type). */
  bodies: string[]
  /** A body whose only named child has one of these types is looked through (Go `statement_list`). */
  unwrap?: string[]
  /** Declaration types that are their own body (Zig `struct`, C `#ifdef`): members are their named children. */
  selfBodies?: string[]
  /**
   * The cases of a switch or match, each with the tokens that end its label (`case 1:` ends at
   * `:`, `Some(v) =>` at `=>`; the last one found counts), and the node types that may stand
   * between the label and what the case holds (Zig's payload: `.a => |v|` is labelled `.a =>`).
   * A node with a case among its children is a switch: its members are its cases. A case too big
   * to fit is a container of what follows its label (a block there is looked into). A case
   * with none of its tokens has its members after its first body, like any compound statement.
   */
  cases?: Record<string, string[]>
  /**
   * Compound statements with no body node, whose statements follow a keyword (Bash's
   * `if ...; then`, `elif ...; then`, `else`): each with the tokens that end its header. Walked as
   * cases are: too big to fit, one is a container of what follows its header.
   */
  clauses?: Record<string, string[]>
  /**
   * Statements that hold a compound expression (`let y = match x {...};`, `return switch ...`):
   * each gives the node it holds (looked through up to 4 times). When such a statement is too big
   * to fit and holds a switch, match, `if` or loop, that is opened as if it were the statement.
   */
  holders?: Record<string, (node: Node) => Node | null>
  /**
   * A closure's parameters, among its statements in a body (Kotlin's `{ x: Int -> ...}`): no
   * member; the closure's label reads on past them, to the end of its line.
   */
  params?: string[]
  /**
   * A statement's label (`outer:`): node types of a labelled statement that holds what it labels
   * (Go's `labeled_statement`, listed in `holders` too), or of a label that stands before it as
   * its sibling (Swift's `statement_label`). The label goes with the loop, even from a line of
   * its own, and starts the loop's label (`outer: for ...`).
   */
  labels?: string[]
  /** Line comment markers, for the fallback splitter. */
  lineComments: string[]
  /** `/* *\/` block comments, for the fallback splitter. */
  blockComments: boolean
  /** Whether the first string statement of a body is a docstring (Python). */
  docstrings?: boolean
  /** Node types that end the statement before them though the tree makes them its sibling (Ruby's heredoc bodies). */
  trailers?: string[]
}

/** Nodes that belong to the declaration after them, in every language (besides comments). */
export const DECORATIONS = new Set(['decorator', 'attribute_item', 'attribute_list', 'attribute', 'annotation', 'marker_annotation'])

/** Kinds under which a nested `function` is called a `method`. */
export const TYPE_KINDS = new Set(['class', 'struct', 'interface', 'trait', 'impl', 'enum', 'object'])

const field = (name: string) => (n: Node): Node | null => n.childForFieldName(name)

const lastNamed = (n: Node): Node | null => n.namedChild(n.namedChildCount - 1)

/**
 * The widest named child that is not a comment (the last of equals): the value of `let x = ...`,
 * `return ...`, `x = ...`, and the part of a call that holds a closure (`xs.map(|x| {...})`).
 */
const held = (n: Node): Node | null => {
  let best: Node | null = null
  for (let i = 0; i < n.namedChildCount; i++) {
    const c = n.namedChild(i)
    if (c !== null && !c.type.includes('comment') && (best === null || c.endIndex - c.startIndex >= best.endIndex - best.startIndex)) best = c
  }
  return best
}

/** `holders` for the statement types listed. */
const holding = (...types: string[]): Record<string, (n: Node) => Node | null> => Object.fromEntries(types.map((t) => [t, held]))

const JS_CASES = { switch_case: [':'], switch_default: [':'] }
const C_CASES = { case_statement: [':'] }
/** `else if (...) {...}`: an else clause that holds an `if`, opened as that `if`. */
const ELSE_IF = holding('else_clause')

/**
 * JS and TS: what may hold a function, an object or a loop too big to fit, looked through to it:
 * `obj.f = function () {...}`, `const o = { key: () => {...} }`, `xs.forEach((x) => {...})`,
 * `(function () {...})()`, `outer: for (...) {...}`, a class field `f = () => {...}`.
 */
const JS_HOLDERS = holding('else_clause', 'expression_statement', 'lexical_declaration', 'variable_declaration', 'variable_declarator',
  'export_statement', 'return_statement', 'assignment_expression', 'await_expression', 'parenthesized_expression', 'call_expression',
  'new_expression', 'arguments', 'member_expression', 'pair', 'labeled_statement', 'field_definition', 'public_field_definition')

/** The first named child of one of `types`. */
function childOfType (n: Node, types: Set<string>): Node | null {
  for (let i = 0; i < n.namedChildCount; i++) {
    const c = n.namedChild(i)
    if (c !== null && types.has(c.type)) return c
  }
  return null
}

const FUNCTION_VALUES = new Set(['arrow_function', 'function_expression', 'function', 'generator_function', 'class'])

/** `const f = () => {...}` and `const C = class {...}`: one declarator whose value is a function or class. */
function functionValue (n: Node): Node | null {
  if (n.namedChildCount !== 1) return null
  const d = n.namedChild(0)
  if (d === null || d.type !== 'variable_declarator') return null
  const v = d.childForFieldName('value')
  return v !== null && FUNCTION_VALUES.has(v.type) ? v : null
}

function exportTarget (n: Node): Node | null {
  return n.childForFieldName('declaration') ?? n.childForFieldName('value')
}

const jsDeclarations: Record<string, string> = {
  class_declaration: 'class',
  class: 'class',
  function_declaration: 'function',
  generator_function_declaration: 'function',
  function_expression: 'function',
  function: 'function',
  generator_function: 'function',
  arrow_function: 'function',
  method_definition: 'method',
}

const jsWrappers: Record<string, (n: Node) => Node | null> = {
  export_statement: exportTarget,
  lexical_declaration: functionValue,
  variable_declaration: functionValue,
}

const tsDeclarations: Record<string, string> = {
  ...jsDeclarations,
  abstract_class_declaration: 'class',
  interface_declaration: 'interface',
  enum_declaration: 'enum',
  internal_module: 'namespace',
  module: 'namespace',
}

const tsWrappers: Record<string, (n: Node) => Node | null> = {
  ...jsWrappers,
  ambient_declaration: (n) => childOfType(n, new Set(Object.keys(tsDeclarations))),
  // A bare `namespace X { ... }` parses as a statement holding the module.
  expression_statement: (n) => childOfType(n, new Set(['internal_module'])),
}

const cDeclarations: Record<string, string> = {
  function_definition: 'function',
  struct_specifier: 'struct',
  union_specifier: 'struct',
  enum_specifier: 'enum',
  preproc_ifdef: 'preprocessor',
  preproc_if: 'preprocessor',
}

/** `typedef struct {...} T;` and `struct S {...} s;`: the specifier, when it has a body. */
const cTypeOf = (n: Node): Node | null => {
  const t = n.childForFieldName('type')
  return t !== null && t.childForFieldName('body') !== null ? t : null
}

const swiftKind = (n: Node): string => {
  const k = n.childForFieldName('declaration_kind')?.type
  return k === 'struct' || k === 'enum' || k === 'extension' ? (k === 'extension' ? 'impl' : k) : 'class'
}

const C_LIKE = { lineComments: ['//'], blockComments: true }

export const LANGUAGES: LanguageSpec[] = [
  {
    name: 'python',
    aliases: ['py'],
    grammar: 'python',
    extensions: ['.py', '.pyi'],
    declarations: { class_definition: 'class', function_definition: 'function' },
    wrappers: { decorated_definition: field('definition') },
    bodies: ['block'],
    lineComments: ['#'],
    blockComments: false,
    docstrings: true,
  },
  {
    name: 'javascript',
    aliases: ['js', 'jsx'],
    grammar: 'javascript',
    extensions: ['.js', '.mjs', '.cjs', '.jsx'],
    declarations: jsDeclarations,
    wrappers: jsWrappers,
    // `object`: an object literal too big to fit is opened, its members are its entries.
    bodies: ['class_body', 'statement_block', 'switch_body', 'object'],
    cases: JS_CASES,
    holders: JS_HOLDERS,
    labels: ['labeled_statement'],
    ...C_LIKE,
  },
  {
    name: 'typescript',
    aliases: ['ts'],
    grammar: 'typescript',
    extensions: ['.ts', '.mts', '.cts'],
    declarations: tsDeclarations,
    wrappers: tsWrappers,
    bodies: ['class_body', 'statement_block', 'interface_body', 'enum_body', 'object_type', 'switch_body', 'object'],
    cases: JS_CASES,
    holders: JS_HOLDERS,
    labels: ['labeled_statement'],
    ...C_LIKE,
  },
  {
    name: 'tsx',
    aliases: [],
    grammar: 'tsx',
    extensions: ['.tsx'],
    declarations: tsDeclarations,
    wrappers: tsWrappers,
    bodies: ['class_body', 'statement_block', 'interface_body', 'enum_body', 'object_type', 'switch_body', 'object'],
    cases: JS_CASES,
    holders: JS_HOLDERS,
    labels: ['labeled_statement'],
    ...C_LIKE,
  },
  {
    name: 'bash',
    aliases: ['sh', 'shell'],
    grammar: 'bash',
    extensions: ['.sh', '.bash'],
    declarations: { function_definition: 'function' },
    // `do_group`: the `do ... done` of `for`, `while`, `until`, `select`; a `{ ... }` group and a
    // `( ... )` subshell are bodies standing as statements.
    bodies: ['compound_statement', 'do_group', 'subshell'],
    cases: { case_item: [')'] },
    clauses: { if_statement: ['then'], elif_clause: ['then'], else_clause: ['else'] },
    lineComments: ['#'],
    blockComments: false,
  },
  {
    name: 'c',
    aliases: [],
    grammar: 'c',
    extensions: ['.c', '.h'],
    declarations: cDeclarations,
    wrappers: { type_definition: cTypeOf, declaration: cTypeOf },
    bodies: ['compound_statement', 'field_declaration_list', 'enumerator_list'],
    selfBodies: ['preproc_ifdef', 'preproc_if'],
    cases: C_CASES,
    holders: ELSE_IF,
    ...C_LIKE,
  },
  {
    name: 'cpp',
    aliases: ['c++'],
    grammar: 'cpp',
    extensions: ['.cpp', '.cc', '.cxx', '.hpp', '.hh'],
    declarations: {
      ...cDeclarations,
      class_specifier: 'class',
      namespace_definition: 'namespace',
      linkage_specification: 'namespace',
    },
    wrappers: { type_definition: cTypeOf, declaration: cTypeOf, template_declaration: lastNamed },
    bodies: ['compound_statement', 'field_declaration_list', 'enumerator_list', 'declaration_list'],
    selfBodies: ['preproc_ifdef', 'preproc_if'],
    cases: C_CASES,
    holders: ELSE_IF,
    ...C_LIKE,
  },
  {
    name: 'csharp',
    aliases: ['c#', 'cs'],
    grammar: 'c_sharp',
    extensions: ['.cs'],
    declarations: {
      namespace_declaration: 'namespace',
      class_declaration: 'class',
      struct_declaration: 'struct',
      record_declaration: 'class',
      interface_declaration: 'interface',
      enum_declaration: 'enum',
      method_declaration: 'method',
      constructor_declaration: 'method',
      destructor_declaration: 'method',
      operator_declaration: 'method',
      local_function_statement: 'function',
    },
    // `initializer_expression`: the braces of an object, collection or array initializer
    // (`new Foo { A = 1, B = () => {...} }`), its members the entries.
    bodies: ['declaration_list', 'block', 'enum_member_declaration_list', 'switch_body', 'initializer_expression'],
    cases: { switch_section: [':'], switch_expression_arm: ['=>'] },
    // A lambda or `delegate` with a block body too, assigned or passed to a call (`Task.Run(() => {...})`),
    // and a labelled loop.
    holders: holding('local_declaration_statement', 'field_declaration', 'variable_declaration', 'variable_declarator', 'return_statement',
      'expression_statement', 'assignment_expression', 'await_expression', 'parenthesized_expression', 'invocation_expression',
      'object_creation_expression', 'member_access_expression', 'argument_list', 'argument', 'lambda_expression', 'labeled_statement'),
    labels: ['labeled_statement'],
    ...C_LIKE,
  },
  {
    name: 'go',
    aliases: ['golang'],
    grammar: 'go',
    extensions: ['.go'],
    declarations: { function_declaration: 'function', method_declaration: 'method', type_spec: 'type' },
    // `type X struct { ... }`: the declaration holds one spec, whose type is the body.
    wrappers: { type_declaration: (n) => n.namedChildCount === 1 ? childOfType(n, new Set(['type_spec'])) : null },
    // `literal_value`: the braces of a composite literal (`map[string]func(){...}`), its members the elements.
    bodies: ['block', 'struct_type', 'interface_type', 'literal_value'],
    unwrap: ['statement_list', 'field_declaration_list'],
    // A switch's cases are its own children (no body node).
    cases: { expression_case: [':'], type_case: [':'], communication_case: [':'], default_case: [':'] },
    // A function literal, started, deferred, assigned, returned or passed (`go func() {...}()`), a
    // labelled loop, and a composite literal (`&T{...}` too) and its elements (`"a": func() {...}`).
    holders: holding('expression_statement', 'go_statement', 'defer_statement', 'return_statement', 'short_var_declaration',
      'assignment_statement', 'var_declaration', 'var_spec', 'expression_list', 'call_expression', 'argument_list', 'parenthesized_expression',
      'labeled_statement', 'composite_literal', 'unary_expression', 'keyed_element', 'literal_element'),
    labels: ['labeled_statement'],
    ...C_LIKE,
  },
  {
    name: 'java',
    aliases: [],
    grammar: 'java',
    extensions: ['.java'],
    declarations: {
      class_declaration: 'class',
      interface_declaration: 'interface',
      enum_declaration: 'enum',
      record_declaration: 'class',
      annotation_type_declaration: 'interface',
      method_declaration: 'method',
      constructor_declaration: 'method',
    },
    bodies: ['class_body', 'interface_body', 'enum_body', 'block', 'constructor_body', 'annotation_type_body', 'switch_block'],
    cases: { switch_block_statement_group: [':'], switch_rule: ['->'] },
    // A lambda with a block body or an anonymous class too, assigned or passed (`xs.forEach(x -> {...})`),
    // and a labelled loop (`restart: for (;;) {...}`).
    holders: holding('local_variable_declaration', 'field_declaration', 'variable_declarator', 'return_statement', 'expression_statement',
      'assignment_expression', 'yield_statement', 'method_invocation', 'object_creation_expression', 'argument_list',
      'parenthesized_expression', 'lambda_expression', 'labeled_statement'),
    labels: ['labeled_statement'],
    ...C_LIKE,
  },
  {
    name: 'kotlin',
    aliases: ['kt'],
    grammar: 'kotlin',
    extensions: ['.kt', '.kts'],
    declarations: {
      class_declaration: 'class',
      object_declaration: 'object',
      companion_object: 'object',
      function_declaration: 'function',
    },
    // `block`: the body of a function, and of an `if`, a loop, `try`, `catch`, `finally`;
    // `lambda_literal`: a lambda's braces, its statements inside.
    bodies: ['class_body', 'enum_class_body', 'function_body', 'block', 'lambda_literal'],
    unwrap: ['block', 'statements'],
    cases: { when_entry: ['->'] },
    // A lambda too, assigned, delegated to or passed, trailing or not (`xs.forEach { x -> ...}`,
    // `val v by lazy {...}`), and an `object : T {...}`.
    holders: holding('property_declaration', 'property_delegate', 'assignment', 'return_expression', 'call_expression', 'annotated_lambda',
      'value_arguments', 'value_argument', 'navigation_expression', 'parenthesized_expression'),
    params: ['lambda_parameters'],
    ...C_LIKE,
  },
  {
    name: 'lua',
    aliases: [],
    grammar: 'lua',
    extensions: ['.lua'],
    declarations: { function_declaration: 'function' },
    bodies: ['block'],
    lineComments: ['--'],
    blockComments: false,
  },
  {
    name: 'php',
    aliases: [],
    grammar: 'php',
    extensions: ['.php'],
    declarations: {
      class_declaration: 'class',
      interface_declaration: 'interface',
      trait_declaration: 'trait',
      enum_declaration: 'enum',
      namespace_definition: 'namespace',
      function_definition: 'function',
      method_declaration: 'method',
    },
    // `array_creation_expression`: an array literal (`[...]`, `array(...)`), its members the elements.
    bodies: ['declaration_list', 'compound_statement', 'enum_declaration_list', 'switch_block', 'match_block', 'array_creation_expression'],
    cases: { case_statement: [':'], default_statement: [':'], match_conditional_expression: ['=>'], match_default_expression: ['=>'] },
    // A closure too, assigned or passed (`Route::get('/', function () {...})`), held by an array
    // element (`'a' => function ($x) {...}`), and an arrow function's body.
    holders: holding('expression_statement', 'assignment_expression', 'return_statement', 'function_call_expression', 'scoped_call_expression',
      'member_call_expression', 'nullsafe_member_call_expression', 'object_creation_expression', 'arguments', 'argument', 'arrow_function',
      'parenthesized_expression', 'array_element_initializer'),
    lineComments: ['//', '#'],
    blockComments: true,
  },
  {
    name: 'ruby',
    aliases: ['rb'],
    grammar: 'ruby',
    extensions: ['.rb'],
    declarations: { class: 'class', module: 'module', singleton_class: 'class', method: 'function', singleton_method: 'method' },
    // `then`: the body of `when`, `in`, `if`, `elsif`; an `else` has its statements as children.
    // `block_body`: the body of a `{ |x| ... }` block (a `do ... end` block's is a `body_statement`).
    bodies: ['body_statement', 'then', 'block_body'],
    cases: { when: [], in_clause: [], else: ['else'] },
    // A block passed to a call (`items.each do |x|`, `describe "x" do`) and a lambda's (`->(x) {...}`).
    holders: holding('assignment', 'call', 'argument_list', 'return', 'lambda', 'parenthesized_statements'),
    trailers: ['heredoc_body'],
    lineComments: ['#'],
    blockComments: false,
  },
  {
    name: 'rust',
    aliases: ['rs'],
    grammar: 'rust',
    extensions: ['.rs'],
    declarations: {
      function_item: 'function',
      impl_item: 'impl',
      struct_item: 'struct',
      union_item: 'struct',
      enum_item: 'enum',
      trait_item: 'trait',
      mod_item: 'module',
      foreign_mod_item: 'module',
    },
    bodies: ['block', 'declaration_list', 'field_declaration_list', 'enum_variant_list', 'match_block'],
    cases: { match_arm: ['=>'] },
    // `match`, `if` and loops are expressions: in a statement, a `let`, a `return`, an assignment,
    // a closure, passed to a call (`xs.iter().map(|x| {...}).collect()`, `spawn(move || {...})`).
    holders: holding('expression_statement', 'let_declaration', 'return_expression', 'assignment_expression', 'else_clause',
      'closure_expression', 'call_expression', 'arguments', 'field_expression', 'try_expression'),
    ...C_LIKE,
  },
  {
    name: 'swift',
    aliases: [],
    grammar: 'swift',
    extensions: ['.swift'],
    declarations: {
      class_declaration: swiftKind,
      protocol_declaration: 'interface',
      function_declaration: 'function',
      init_declaration: 'method',
      deinit_declaration: 'method',
    },
    // `statements`: a function's body, and what is between the braces of an `if`, a loop, `do`, `catch`.
    bodies: ['class_body', 'protocol_body', 'enum_class_body', 'function_body', 'statements'],
    unwrap: ['statements'],
    cases: { switch_entry: [':'] },
    // A closure (its `statements`), assigned or passed, trailing or not (`DispatchQueue.main.async {...}`).
    holders: holding('property_declaration', 'assignment', 'control_transfer_statement', 'call_expression', 'call_suffix',
      'value_arguments', 'value_argument', 'navigation_expression', 'await_expression', 'try_expression'),
    // `outer: for x in xs {`: the label is the loop's sibling.
    labels: ['statement_label'],
    ...C_LIKE,
  },
  {
    name: 'zig',
    aliases: [],
    grammar: 'zig',
    extensions: ['.zig'],
    declarations: {
      function_declaration: 'function',
      test_declaration: 'function',
      struct_declaration: 'struct',
      enum_declaration: 'enum',
      union_declaration: 'struct',
    },
    wrappers: { variable_declaration: (n) => childOfType(n, new Set(['struct_declaration', 'enum_declaration', 'union_declaration'])) },
    // `block_expression`: the body of an `if`, `while`, `for` (a `block` inside, looked through).
    bodies: ['block', 'block_expression'],
    unwrap: ['block'],
    selfBodies: ['struct_declaration', 'enum_declaration', 'union_declaration'],
    cases: { switch_case: ['=>', 'payload'] },
    // A loop, labelled or not, is held by a `labeled_statement`; `else if` by an else clause.
    holders: holding('variable_declaration', 'expression_statement', 'return_expression', 'labeled_statement', 'else_clause'),
    labels: ['labeled_statement'],
    ...C_LIKE,
  },
]

const byName = new Map<string, LanguageSpec>()
for (const l of LANGUAGES) for (const n of [l.name, ...l.aliases]) byName.set(n, l)

/** The language a format name selects (canonical name or alias), if any. */
export function languageByFormat (format: string): LanguageSpec | undefined {
  return byName.get(format.toLowerCase())
}

/** The language for a file name, by its extension (longest match). */
export function languageByFilename (filename: string): LanguageSpec | undefined {
  const lower = filename.toLowerCase()
  let best: LanguageSpec | undefined
  let length = 0
  for (const l of LANGUAGES) {
    for (const e of l.extensions) {
      if (e.length > length && lower.endsWith(e)) {
        best = l
        length = e.length
      }
    }
  }
  return best
}

const SHEBANGS: Array<[RegExp, string]> = [
  [/^#!.*\bpython[0-9.]*\b/, 'python'],
  [/^#!.*\b(?:bash|sh|zsh|ksh|dash)\b/, 'bash'],
  [/^#!.*\b(?:node|deno|bun)\b/, 'javascript'],
  [/^#!.*\bruby\b/, 'ruby'],
  [/^#!.*\blua\b/, 'lua'],
  [/^#!.*\bphp\b/, 'php'],
]

/** Guesses the language from the first characters: a shebang line or a `<?php` tag. */
export function sniffLanguage (sample: string): LanguageSpec | undefined {
  const head = sample.replace(/^\uFEFF/, '')
  if (head.startsWith('<?php')) return byName.get('php')
  const line = head.slice(0, head.indexOf('\n') >>> 0)
  for (const [re, name] of SHEBANGS) if (re.test(line)) return byName.get(name)
  return undefined
}
