//! Rules about written text that the index, search, `similar` and the knowledge base share:
//! where words are in scripts written without spaces ([`cjk`]), and which names keep
//! their symbols (`C++`, `C#`: [`symbols`]), and one spelling for names Unicode writes two
//! ways ([`unicode_form`]). Below every stage, so each can use them.

pub(crate) mod cjk;
pub(crate) mod symbols;
pub(crate) mod unicode_form;
