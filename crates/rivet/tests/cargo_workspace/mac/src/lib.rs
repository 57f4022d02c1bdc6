use proc_macro::TokenStream;
/// `#[derive(Describe)]` adds `fn describe() -> String` naming the type and its field count.
#[proc_macro_derive(Describe)]
pub fn derive_describe(input: TokenStream) -> TokenStream {
    let text = input.to_string();
    let name = text.split_whitespace().skip_while(|w| *w != "struct").nth(1).unwrap().trim_end_matches(['{', ';']).to_string();
    let fields = text.matches(':').count();
    format!("impl {name} {{ pub fn describe() -> String {{ format!(\"{name} with {fields} fields\") }} }}").parse().unwrap()
}
