// The Fold block language: declarations, statements, expressions and types.
// Precedence (loosest first) is documented in docs/language.md; in the `expr`
// rule below, ANTLR gives earlier alternatives tighter binding.
grammar Fold;

program : decl* EOF ;

// ---------------------------------------------------------------- declarations
decl
  : 'import' STRING ';'                                           # importDecl
  | 'const' ID '=' expr ';'                                       # constDecl
  | 'data' ID '=' dataBody ';'                                    # dataDecl
  | paramDeclaration                                              # paramDecl
  | 'layer' ID '=' expr ';'                                       # layerDecl
  | 'layer' ID '(' layerConstants? ')' '(' paramList? ')' ('->' type)? defBody # layerDefDecl
  | 'def' ID '(' paramList? ')' ('->' type)? defBody              # defDecl
  | 'model' ID '(' paramList? ')' block                           # modelDecl
  ;

paramDeclaration : 'param' ID ':' type ('=' expr)? ';' ;

dataBody : recordFields | variant ('|' variant)* ;
variant  : ID recordFields? ;
recordFields : '{' (field (',' field)* ','?)? '}' ;
field    : ID ':' type ;

// A layer definition's constants: `E: int`, `act: activation = tanh`.
layerConstants : layerConstant (',' layerConstant)* ','? ;
layerConstant  : ID ':' kind=('int' | 'float' | ID) ('=' expr)? ;

paramList : parameter (',' parameter)* ','? ;
parameter : ID ':' type ;

defBody : block | '=' expr ';' ;
block   : '{' stmt* '}' ;

// ------------------------------------------------------------------ statements
stmt
  : 'let' pattern '=' expr ';'                                    # letStmt
  | 'return' expr ';'                                             # returnStmt
  | 'loss' expr ';'                                               # lossStmt
  | 'metric' ID '=' expr ';'                                      # metricStmt
  | 'output' expr ';'                                             # outputStmt
  | paramDeclaration                                              # paramStmt
  | 'layer' ID '=' expr ';'                                       # layerStmt
  ;

pattern
  : ID                                                            # namePattern
  | '_'                                                           # wildcardPattern
  | '(' pattern (',' pattern)+ ','? ')'                           # tuplePattern
  ;

// ----------------------------------------------------------------- expressions
expr
  : primary                                                       # primaryExpr
  | expr '.' (ID | INT)                                           # memberExpr
  | expr '.' FLOAT                                                # doubleIndexExpr
  | expr '(' argList? ')'                                         # callExpr
  | expr '[' subscript (',' subscript)+ ','? ']'                  # subscriptsExpr
  | expr '[' lo=expr? ':' hi=expr? ']'                            # sliceExpr
  | expr '[' expr ']'                                             # indexExpr
  | '-' expr                                                      # negExpr
  | '!' expr                                                      # notExpr
  | expr op=('*' | '/' | '@') expr                                # mulExpr
  | expr op=('+' | '-') expr                                      # addExpr
  | expr op=('==' | '!=' | '<' | '<=' | '>' | '>=') expr          # compareExpr
  | expr '&&' expr                                                # andExpr
  | expr '||' expr                                                # orExpr
  | expr '>>' expr                                                # pipeExpr
  | '|' pattern (',' pattern)* '|' expr                           # lambdaExpr
  ;

primary
  : INT                                                           # intLit
  | FLOAT                                                         # floatLit
  | STRING                                                        # stringLit
  | ('true' | 'false')                                            # boolLit
  | ID                                                            # nameRef
  | '.' (ID | INT)                                                # accessorBlock
  | '(' expr ')'                                                  # parenExpr
  | '(' expr ',' (expr (',' expr)* ','?)? ')'                     # tupleExpr
  | '[' (expr (',' expr)* ','?)? ']'                              # listExpr
  | 'match' expr '{' matchArm (',' matchArm)* ','? '}'            # matchExpr
  | ifExpression                                                  # ifExpr
  ;

ifExpression : 'if' expr '{' expr '}' 'else' (ifExpression | '{' expr '}') ;

matchArm : armPattern '=>' expr ;
armPattern
  : ctor=ID binder=(ID | '_')?                                    # variantArm
  | '_'                                                           # defaultArm
  ;

// One axis of `m[i, a:b]`: an index, or a range with either bound left out.
subscript
  : lo=expr? ':' hi=expr?                                         # rangeSubscript
  | expr                                                          # indexSubscript
  ;

argList  : argument (',' argument)* ','? ;
argument
  : name=ID ':' expr                                              # namedArg
  | from=expr '->' to=expr                                        # arrowArg
  | expr                                                          # positionalArg
  ;

// ----------------------------------------------------------------------- types
type
  : primaryType                                                   # simpleType
  | type '?'                                                      # optionalType
  | <assoc=right> type '->' type                                  # blockType
  ;

primaryType
  : name=('int' | 'float' | 'bool' | 'string')                    # hostScalarType
  | elem=('f32' | 'i32') ('[' expr (',' expr)* ']')?              # tensorType
  | '(' type ')'                                                  # parenType
  | '(' type (',' type)+ ','? ')'                                 # tupleType
  | '[' type ']'                                                  # listType
  | recordFields                                                  # recordType
  | ID                                                            # namedType
  ;

// ---------------------------------------------------------------------- tokens
ID     : [A-Za-z_] [A-Za-z0-9_]* ;
FLOAT  : DIGITS '.' DIGITS EXPONENT? | DIGITS EXPONENT ;
INT    : DIGITS ;
STRING : '"' (~["\\\r\n] | '\\' .)* '"' ;

fragment DIGITS   : [0-9]+ ;
fragment EXPONENT : [eE] [+-]? DIGITS ;

LINE_COMMENT  : '//' ~[\r\n]* -> channel(HIDDEN) ;
BLOCK_COMMENT : '/*' .*? '*/' -> channel(HIDDEN) ;
WS            : [ \t\r\n]+ -> channel(HIDDEN) ;
// Anything else is one bad character; the parser reports it at its location.
ERROR_CHAR    : . ;
