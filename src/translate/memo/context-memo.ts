/**
 * Values made from objects, kept while the object lives and the context they were made in (a key of what
 * else they read) is the same: the cluster mode keeps one across builds, so an unchanged object's value
 * is the same object again, which what comes after can reuse by identity. The memo/ folder holds the
 * generic memos of the incremental build; each stage keeps its own beside it (settle/hosts.ts,
 * settle/sni-memo.ts, ingress/claim-memo.ts). It imports only the shared ground.
 */
export class ContextMemo<Key extends object, Value> {
  private context: string | undefined;
  private last = new WeakMap<Key, Value>();

  /** `make`, for one build made in `context`: each object's value is made once while the context stays. */
  in(context: string, make: (key: Key) => Value): (key: Key) => Value {
    if (context !== this.context) this.last = new WeakMap();
    this.context = context;
    return (key) => {
      let made = this.last.get(key);
      if (made === undefined) this.last.set(key, (made = make(key)));
      return made;
    };
  }
}
