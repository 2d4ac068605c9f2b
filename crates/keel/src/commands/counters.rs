//! `counter`/`counters` and `key`/`keys`: named values scripts keep on the server (read, set,
//! delete, atomic increment, compare-and-set), as `p4 counter` and `p4 key` do; and `review`/
//! `reviews`, which review daemons call with the `review` counter.

use anyhow::{Result, bail};
use clap::Args;
use keel_client::ops::{self, Counter, CounterOp, CounterUpdate, Space};

use crate::output::Record;
use crate::session::Session;

#[derive(Debug, Args)]
pub struct CounterArgs {
    /// Delete it (it reads as 0 again).
    #[arg(short = 'd', conflicts_with_all = ["increment", "value", "from"])]
    pub delete: bool,
    /// Add one to it (a number; absent counts as 0) and print the new value.
    #[arg(short = 'i', conflicts_with_all = ["value", "from"])]
    pub increment: bool,
    /// Also print the value it held before.
    #[arg(short = 'v')]
    pub previous: bool,
    /// Set it to --to only if it holds this value now (absent counts as 0).
    #[arg(
        long = "from",
        value_name = "OLD",
        requires = "to",
        conflicts_with = "value"
    )]
    pub from: Option<String>,
    /// The value --from sets.
    #[arg(long = "to", value_name = "NEW", requires = "from")]
    pub to: Option<String>,
    pub name: String,
    /// The value to store; without one (and without -d, -i or --from) the value is printed.
    pub value: Option<String>,
}

#[derive(Debug, Args)]
pub struct CounterForceArgs {
    /// Set or delete a counter the server reserves (super users).
    #[arg(short = 'f')]
    pub force: bool,
    #[command(flatten)]
    pub args: CounterArgs,
}

#[derive(Debug, Args)]
pub struct CountersArgs {
    /// Only names matching this filter (`*` matches any run of characters).
    #[arg(short = 'e', value_name = "FILTER")]
    pub filter: Option<String>,
    /// At most this many.
    #[arg(short = 'm', value_name = "MAX")]
    pub max: Option<u64>,
}

fn noun(space: Space) -> (&'static str, &'static str) {
    match space {
        Space::Counter => ("counter", "Counter"),
        Space::Key => ("key", "Key"),
    }
}

/// `counter [-f] ...`.
pub async fn counter(s: &mut Session, args: CounterForceArgs) -> Result<()> {
    run(s, Space::Counter, args.args, args.force).await
}

/// `key ...`.
pub async fn key(s: &mut Session, args: CounterArgs) -> Result<()> {
    run(s, Space::Key, args, false).await
}

async fn run(s: &mut Session, space: Space, args: CounterArgs, force: bool) -> Result<()> {
    let (word, title) = noun(space);
    let op = match (&args.value, &args.from, &args.to) {
        _ if args.delete => Some(CounterOp::Delete),
        _ if args.increment => Some(CounterOp::Increment),
        (Some(value), _, _) => Some(CounterOp::Set(value.clone())),
        (None, Some(from), Some(to)) => Some(CounterOp::CompareAndSet {
            from: from.clone(),
            to: to.clone(),
        }),
        (None, None, None) => None,
        _ => bail!("--from and --to go together"),
    };
    let Some(op) = op else {
        if force || args.previous {
            bail!("-f and -v go with a change ({word} NAME VALUE, -d, -i or --from/--to)");
        }
        let got = ops::counter(&s.conn, space, &args.name).await?;
        s.out.emit(
            Record::new().s(word, &got.name).s("value", &got.value),
            &got.value,
        );
        return Ok(());
    };
    let increment = op == CounterOp::Increment;
    let update = CounterUpdate {
        space,
        name: args.name,
        op,
        force,
    };
    let done = ops::update_counter(&s.conn, update).await?;
    let action = if done.value.is_none() {
        "deleted"
    } else {
        "set"
    };
    let mut record = Record::new().s(word, &done.name);
    if let Some(value) = &done.value {
        record = record.s("value", value);
    }
    record = record.s("previous", &done.previous).s("action", action);
    let mut text = if increment {
        done.value.clone().unwrap_or_default()
    } else {
        format!("{title} {} {action}.", done.name)
    };
    if args.previous {
        text = format!("{text}\nPrevious value: {}", done.previous);
    }
    s.out.emit(record, text);
    Ok(())
}

/// `counters [-e FILTER] [-m MAX]`.
pub async fn counters(s: &mut Session, args: CountersArgs) -> Result<()> {
    list(s, Space::Counter, args).await
}

/// `keys [-e FILTER] [-m MAX]`.
pub async fn keys(s: &mut Session, args: CountersArgs) -> Result<()> {
    list(s, Space::Key, args).await
}

async fn list(s: &mut Session, space: Space, args: CountersArgs) -> Result<()> {
    let (word, _) = noun(space);
    let mut values = ops::counters(
        &s.conn,
        space,
        args.filter.as_deref(),
        args.max.unwrap_or(0),
    )
    .await?;
    while let Some(Counter { name, value }) = values.next().await? {
        s.out.emit(
            Record::new().s(word, &name).s("value", &value),
            format!("{name} = {value}"),
        );
    }
    Ok(())
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// List this change and every later submitted change.
    #[arg(short = 'c', value_name = "CHANGE")]
    pub change: Option<u64>,
    /// List the submitted changes after this counter's value; with -c, set the counter to
    /// CHANGE instead (and list nothing).
    #[arg(short = 't', value_name = "COUNTER")]
    pub counter: Option<String>,
}

#[derive(Debug, Args)]
pub struct ReviewsArgs {
    /// Users reviewing a file of this submitted change.
    #[arg(short = 'c', value_name = "CHANGE")]
    pub change: Option<u64>,
    /// Users reviewing any of these files.
    pub files: Vec<String>,
}

/// `review [-c N] [-t COUNTER]`: what a review daemon reads (`-c N -t COUNTER` sets the
/// counter, as `counter COUNTER N` does).
pub async fn review(s: &mut Session, args: ReviewArgs) -> Result<()> {
    if let (Some(change), Some(counter)) = (args.change, &args.counter) {
        let update = CounterUpdate {
            space: Space::Counter,
            name: counter.clone(),
            op: CounterOp::Set(change.to_string()),
            force: false,
        };
        let done = ops::update_counter(&s.conn, update).await?;
        let value = done.value.unwrap_or_default();
        s.out.emit(
            Record::new()
                .s("counter", &done.name)
                .s("value", &value)
                .s("action", "set"),
            format!("Counter {} set.", done.name),
        );
        return Ok(());
    }
    let mut changes = ops::review(&s.conn, args.change, args.counter.as_deref()).await?;
    while let Some(c) = changes.next().await? {
        s.out.emit(
            Record::new()
                .n("change", c.change)
                .s("user", &c.user)
                .s("email", &c.email)
                .s("name", &c.full_name),
            format!(
                "Change {} {} <{}> ({})",
                c.change, c.user, c.email, c.full_name
            ),
        );
    }
    Ok(())
}

/// `reviews [-c N] [FILE...]`: the users who review those files.
pub async fn reviews(s: &mut Session, args: ReviewsArgs) -> Result<()> {
    let files = if args.files.is_empty() {
        Vec::new()
    } else {
        s.file_args(&args.files).await?
    };
    let mut users = ops::reviews(&s.conn, args.change, files).await?;
    while let Some(u) = users.next().await? {
        s.out.emit(
            Record::new()
                .s("user", &u.name)
                .s("email", &u.email)
                .s("name", &u.full_name),
            format!("{} <{}> ({})", u.name, u.email, u.full_name),
        );
    }
    Ok(())
}
