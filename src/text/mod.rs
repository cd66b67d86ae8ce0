//! Rules about written text that the index, search, `similar` and the knowledge base share:
//! where words are in scripts written without spaces ([`cjk`]), and which names keep
//! their symbols (`C++`, `C#`: [`symbols`]). Below every stage, so each can use them.

pub(crate) mod cjk;
pub(crate) mod symbols;
