/**
 * One PostgreSQL statement with its bound values, as `pg`'s `query` takes it. A JS array binds as one
 * PostgreSQL array: a whole list of ids is one value (`= ANY($2)`), and a batch of rows is one array per
 * column (`unnest`), so a statement's text does not grow with its rows.
 */
export interface Statement {
  text: string;
  values: unknown[];
}
