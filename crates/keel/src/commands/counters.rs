//! `counter`/`counters` and `key`/`keys`: named values scripts keep on the server (read, set,
//! delete, atomic increment, compare-and-set), as `p4 counter` and `p4 key` do; and `review`/
//! `reviews`, which review daemons call with the `review` counter.

use anyhow::{Result, bail};
use clap::Args;
use keel_proto::v1::update_counter_request::Op;
use keel_proto::v1::{
    CompareAndSet, CounterSpace, CounterValue, GetCounterRequest, ListCountersRequest,
    ReviewRequest, ReviewsRequest, UpdateCounterRequest,
};

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

fn noun(space: CounterSpace) -> (&'static str, &'static str) {
    match space {
        CounterSpace::Counter => ("counter", "Counter"),
        CounterSpace::Key => ("key", "Key"),
    }
}

/// `counter [-f] ...`.
pub async fn counter(s: &mut Session, args: CounterForceArgs) -> Result<()> {
    run(s, CounterSpace::Counter, args.args, args.force).await
}

/// `key ...`.
pub async fn key(s: &mut Session, args: CounterArgs) -> Result<()> {
    run(s, CounterSpace::Key, args, false).await
}

async fn run(s: &mut Session, space: CounterSpace, args: CounterArgs, force: bool) -> Result<()> {
    let (word, title) = noun(space);
    let op = match (&args.value, &args.from, &args.to) {
        _ if args.delete => Some(Op::Delete(true)),
        _ if args.increment => Some(Op::Increment(true)),
        (Some(value), _, _) => Some(Op::Set(value.clone())),
        (None, Some(from), Some(to)) => Some(Op::CompareAndSet(CompareAndSet {
            from: from.clone(),
            to: to.clone(),
        })),
        (None, None, None) => None,
        _ => bail!("--from and --to go together"),
    };
    let Some(op) = op else {
        if force || args.previous {
            bail!("-f and -v go with a change ({word} NAME VALUE, -d, -i or --from/--to)");
        }
        let request = GetCounterRequest {
            caller: s.caller(),
            space: space as i32,
            name: args.name,
        };
        let got = s.check(s.client().get_counter(request).await)?;
        s.out.emit(
            Record::new().s(word, &got.name).s("value", &got.value),
            &got.value,
        );
        return Ok(());
    };
    let increment = matches!(op, Op::Increment(_));
    let request = UpdateCounterRequest {
        caller: s.caller(),
        space: space as i32,
        name: args.name,
        op: Some(op),
        force,
    };
    let done = s.check(s.client().update_counter(request).await)?;
    let action = if done.deleted { "deleted" } else { "set" };
    let mut record = Record::new().s(word, &done.name);
    if !done.deleted {
        record = record.s("value", &done.value);
    }
    record = record.s("previous", &done.previous).s("action", action);
    let mut text = if increment {
        done.value.clone()
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
    list(s, CounterSpace::Counter, args).await
}

/// `keys [-e FILTER] [-m MAX]`.
pub async fn keys(s: &mut Session, args: CountersArgs) -> Result<()> {
    list(s, CounterSpace::Key, args).await
}

async fn list(s: &mut Session, space: CounterSpace, args: CountersArgs) -> Result<()> {
    let (word, _) = noun(space);
    let request = ListCountersRequest {
        caller: s.caller(),
        space: space as i32,
        filter: args.filter.unwrap_or_default(),
        max: args.max.unwrap_or(0),
    };
    let reply = s.client().list_counters(request).await;
    let mut stream = s.check(reply)?;
    while let Some(CounterValue { name, value, .. }) =
        stream.message().await.map_err(|e| s.conn.status(e))?
    {
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
        let request = UpdateCounterRequest {
            caller: s.caller(),
            space: CounterSpace::Counter as i32,
            name: counter.clone(),
            op: Some(Op::Set(change.to_string())),
            force: false,
        };
        let done = s.check(s.client().update_counter(request).await)?;
        s.out.emit(
            Record::new()
                .s("counter", &done.name)
                .s("value", &done.value)
                .s("action", "set"),
            format!("Counter {} set.", done.name),
        );
        return Ok(());
    }
    let request = ReviewRequest {
        caller: s.caller(),
        change: args.change.unwrap_or(0),
        counter: args.counter.unwrap_or_default(),
    };
    let reply = s.client().review(request).await;
    let mut stream = s.check(reply)?;
    while let Some(c) = stream.message().await.map_err(|e| s.conn.status(e))? {
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
    let request = ReviewsRequest {
        caller: s.caller(),
        change: args.change.unwrap_or(0),
        files,
    };
    let reply = s.client().reviews(request).await;
    let mut stream = s.check(reply)?;
    while let Some(u) = stream.message().await.map_err(|e| s.conn.status(e))? {
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
